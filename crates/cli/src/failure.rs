//! The exit code a failed command ends with: the first error in its chain that knows its code
//! ([`Coded`]), outermost first, else [`FAILURE`]. This is the one downcast table over every
//! error type with a code, so it sits above the commands whose errors it names; the codes and
//! the trait are the lower `exit_code`.

use std::error::Error;

use tidings_connect::ConnectError;
use tidings_core::settings::SettingsError;
use tidings_platform::PathError;
use tidings_server::daemon::DaemonError;
use tidings_server::demo::DemoError;
use tidings_server::engine::StartError;
use tidings_server::http::HttpError;
use tidings_server::http::agent_tokens::AgentTokenError;
use tidings_server::socket::SocketError;

use crate::agents::AgentsError;
use crate::check::CheckError;
use crate::client::ClientError;
use crate::connect::ConnectCliError;
use crate::doctor::Unhealthy;
use crate::exit_code::{Coded, FAILURE};
use crate::login::InstallError;
use crate::tail::TailError;
use crate::token::TokenError;
use crate::webhooks::WebhooksError;

/// The exit code for an error that ended a command: the first error in its chain that knows
/// its code, else [`FAILURE`]. Outermost first, so a socket write that hit a broken pipe is
/// the connection's failure, not a reader that closed our stdout.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    error.chain().find_map(coded).unwrap_or(FAILURE)
}

/// The one downcast table: every error type with a [`Coded`] impl is listed here.
fn coded(cause: &(dyn Error + 'static)) -> Option<u8> {
    fn code<E: Coded + Error + 'static>(cause: &(dyn Error + 'static)) -> Option<u8> {
        cause.downcast_ref::<E>().map(Coded::exit_code)
    }
    code::<ClientError>(cause)
        .or_else(|| code::<Unhealthy>(cause))
        .or_else(|| code::<TailError>(cause))
        .or_else(|| code::<CheckError>(cause))
        .or_else(|| code::<TokenError>(cause))
        .or_else(|| code::<AgentsError>(cause))
        .or_else(|| code::<WebhooksError>(cause))
        .or_else(|| code::<InstallError>(cause))
        .or_else(|| code::<ConnectCliError>(cause))
        .or_else(|| code::<ConnectError>(cause))
        .or_else(|| code::<StartError>(cause))
        .or_else(|| code::<SocketError>(cause))
        .or_else(|| code::<PathError>(cause))
        .or_else(|| code::<HttpError>(cause))
        .or_else(|| code::<AgentTokenError>(cause))
        .or_else(|| code::<DaemonError>(cause))
        .or_else(|| code::<DemoError>(cause))
        .or_else(|| code::<SettingsError>(cause))
        .or_else(|| code::<std::io::Error>(cause))
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::PathBuf;

    use super::*;
    use crate::exit_code::{CONFIG, NOT_RUNNING, SUCCESS};

    fn settings_error() -> SettingsError {
        SettingsError::Io {
            path: PathBuf::from("/nowhere/settings.toml"),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        }
    }

    #[test]
    fn a_code_is_found_under_a_wrapper_that_has_none() {
        // A settings error under the demo's transparent wrapper, under a context line.
        let error = anyhow::Error::new(DemoError::Settings(settings_error())).context("demo");
        assert_eq!(exit_code(&error), CONFIG);
        let error = anyhow::Error::new(settings_error()).context("starting");
        assert_eq!(exit_code(&error), CONFIG);
    }

    #[test]
    fn the_outermost_code_wins() {
        // A broken pipe on the daemon's socket is the connection's failure.
        let error = anyhow::Error::new(ClientError::Io {
            path: PathBuf::from("/tmp/t.sock"),
            source: io::Error::from(io::ErrorKind::BrokenPipe),
        });
        assert_eq!(exit_code(&error), FAILURE);
        let error = anyhow::Error::new(ClientError::NotRunning {
            path: PathBuf::from("/tmp/t.sock"),
        })
        .context("rotating");
        assert_eq!(exit_code(&error), NOT_RUNNING);
    }

    #[test]
    fn a_closed_stdout_is_success_and_anything_else_failure() {
        let error = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("x");
        assert_eq!(exit_code(&error), SUCCESS);
        assert_eq!(exit_code(&anyhow::anyhow!("something else")), FAILURE);
    }
}
