//! What the socket, the handler, HTTP and the watchers reach through the handle.
//!
//! The engine, the hub, the clients and the limits, and where those layers report back: the
//! socket's path, the HTTP endpoint's state and its token reload.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tidings_core::Engine;
use tokio_util::sync::CancellationToken;

use super::{Daemon, DemoControl};
use crate::agents::Agents;
use crate::clients::Clients;
use crate::fanout::Fanout;
use crate::home::home_relative;
use crate::hub::Hub;
use crate::limits::ServerLimits;
use crate::state::HttpEndpointState;
use crate::sync::lock;

/// The HTTP endpoint's token reload (`tidings/token/rotate`), registered while an endpoint
/// serves. A trait so the daemon holds it without depending on `http`, which sits above it.
pub(crate) trait TokenReload: Send + Sync {
    /// Re-read the token; the result's body, or why not. Blocks on the keychain.
    fn reload_blocking(&self) -> Result<Value, String>;
}

impl Daemon {
    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.inner.engine
    }

    pub(crate) fn fanout(&self) -> &Arc<Fanout> {
        &self.inner.fanout
    }

    pub(crate) fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    pub(crate) fn limits(&self) -> &ServerLimits {
        &self.inner.limits
    }

    pub(crate) fn demo(&self) -> Option<&Arc<dyn DemoControl>> {
        self.inner.demo.as_ref()
    }

    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    pub(crate) fn clients(&self) -> &Arc<Clients> {
        &self.inner.clients
    }

    /// The agents seen and the questions open.
    pub fn agents(&self) -> &Agents {
        self.inner.clients.agents()
    }

    /// Tell the State's listeners something changed.
    /// Every webhook subscription.
    pub fn webhooks(&self) -> &Arc<crate::webhooks::Webhooks> {
        &self.inner.webhooks
    }

    pub(crate) fn board_changed(&self) {
        self.inner.board.changed();
    }

    /// Where the HTTP supervisor reports the endpoint's state.
    pub(crate) fn report_http(&self, state: HttpEndpointState) {
        self.inner.board.set_http(state);
    }

    /// The socket the engine serves, shown home-relative in `State`.
    pub(crate) fn set_socket_path(&self, path: &Path) {
        *lock(&self.inner.socket) = Some(home_relative(path));
        self.inner.board.changed();
    }

    /// The HTTP endpoint's token reload, if an endpoint serves.
    pub(crate) fn token_reload(&self) -> Option<Arc<dyn TokenReload>> {
        lock(&self.inner.token_reload).clone()
    }

    /// Record the endpoint's token reload; one endpoint at a time (a second is refused).
    pub(crate) fn set_token_reload(&self, reload: Arc<dyn TokenReload>) -> bool {
        let mut slot = lock(&self.inner.token_reload);
        if slot.is_some() {
            return false;
        }
        *slot = Some(reload);
        true
    }

    /// Forget `reload` as the endpoint stops; a no-op if another endpoint has since taken its
    /// place, so a late drop cannot unregister its successor.
    pub(crate) fn clear_token_reload(&self, reload: &Arc<dyn TokenReload>) {
        let mut slot = lock(&self.inner.token_reload);
        if slot
            .as_ref()
            .is_some_and(|r| std::ptr::addr_eq(Arc::as_ptr(r), Arc::as_ptr(reload)))
        {
            *slot = None;
        }
    }
}
