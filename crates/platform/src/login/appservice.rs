//! [`AppService`]: `SMAppService.agent(plistName:)` behind a small trait, so the control
//! flow (`SMAppService` first, the plist when it cannot apply) runs on Linux with
//! [`FakeAppService`]. The real one, [`SmAppService`], is macOS-only.

use std::sync::Mutex;

use super::{PLIST_NAME, Plan};

/// `SMAppService`'s status of the bundled agent, plus "cannot apply here".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceState {
    /// Known to macOS but not registered.
    NotRegistered,
    /// Registered and allowed: it starts at login.
    Enabled,
    /// Registered, but the user must allow it in System Settings > Login Items.
    RequiresApproval,
    /// macOS found no such agent in the bundle (a misbuilt bundle).
    NotFound,
    /// Not macOS, or not running from a bundle: only the plist can be used.
    Unavailable,
}

/// Registers the agent the app bundle ships.
pub trait AppService: Send + Sync {
    /// Where the bundled agent stands.
    fn state(&self) -> ServiceState;
    /// Registers it (macOS starts it at once and at every login); the error in words.
    fn register(&self) -> Result<(), String>;
    /// Unregisters it; the error in words.
    fn unregister(&self) -> Result<(), String>;
}

/// The step a dry run and a report show for an `SMAppService` call.
pub(super) fn command(action: &str) -> String {
    format!("SMAppService.agent(plistName: \"{PLIST_NAME}\").{action}()")
}

/// Where `SMAppService` cannot apply (Linux, a bare binary): always [`ServiceState::Unavailable`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAppService;

impl AppService for NoAppService {
    fn state(&self) -> ServiceState {
        ServiceState::Unavailable
    }
    fn register(&self) -> Result<(), String> {
        Err("SMAppService is not available here".to_owned())
    }
    fn unregister(&self) -> Result<(), String> {
        Err("SMAppService is not available here".to_owned())
    }
}

/// A test double that behaves as macOS does: `register` moves to [`Self::after_register`]
/// (or fails with [`Self::refuse`]), `unregister` to `NotRegistered`. Records each call.
#[derive(Debug)]
pub struct FakeAppService {
    state: Mutex<ServiceState>,
    after_register: ServiceState,
    refuse: Option<String>,
    calls: Mutex<Vec<&'static str>>,
}

impl FakeAppService {
    /// A fake in `state`; registering makes it `Enabled`.
    pub fn new(state: ServiceState) -> Self {
        FakeAppService {
            state: Mutex::new(state),
            after_register: ServiceState::Enabled,
            refuse: None,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Registering leaves it in `state` (e.g. `RequiresApproval`).
    #[must_use]
    pub fn after_register(mut self, state: ServiceState) -> Self {
        self.after_register = state;
        self
    }

    /// Registering fails with `reason` (an unsigned build).
    #[must_use]
    pub fn refuse(mut self, reason: &str) -> Self {
        self.refuse = Some(reason.to_owned());
        self
    }

    /// `register` / `unregister`, in call order.
    pub fn calls(&self) -> Vec<&'static str> {
        lock(&self.calls).clone()
    }
}

impl AppService for FakeAppService {
    fn state(&self) -> ServiceState {
        *lock(&self.state)
    }
    fn register(&self) -> Result<(), String> {
        lock(&self.calls).push("register");
        if let Some(reason) = &self.refuse {
            return Err(reason.clone());
        }
        *lock(&self.state) = self.after_register;
        Ok(())
    }
    fn unregister(&self) -> Result<(), String> {
        lock(&self.calls).push("unregister");
        *lock(&self.state) = ServiceState::NotRegistered;
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The real `SMAppService.agent(plistName: "dev.tidings.Tidings.plist")` of the calling
/// process's main bundle (macOS 13+, the app's minimum). Made per call: the Objective-C
/// object is not `Send`.
#[cfg(target_os = "macos")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SmAppService;

#[cfg(target_os = "macos")]
impl SmAppService {
    fn service() -> smappservice_rs::AppService {
        smappservice_rs::AppService::new(smappservice_rs::ServiceType::Agent {
            plist_name: super::PLIST_NAME,
        })
    }
}

#[cfg(target_os = "macos")]
impl AppService for SmAppService {
    fn state(&self) -> ServiceState {
        use smappservice_rs::ServiceStatus;
        match Self::service().status() {
            ServiceStatus::NotRegistered => ServiceState::NotRegistered,
            ServiceStatus::Enabled => ServiceState::Enabled,
            ServiceStatus::RequiresApproval => ServiceState::RequiresApproval,
            ServiceStatus::NotFound => ServiceState::NotFound,
        }
    }
    fn register(&self) -> Result<(), String> {
        Self::service().register().map_err(|e| e.to_string())
    }
    fn unregister(&self) -> Result<(), String> {
        Self::service().unregister().map_err(|e| e.to_string())
    }
}

/// `SMAppService` when this is macOS and `plan`'s executable sits in a bundle that ships the
/// agent; [`NoAppService`] otherwise (Linux, a dev build, `--platform macos` elsewhere).
pub fn default_app_service(plan: &Plan) -> Box<dyn AppService> {
    #[cfg(target_os = "macos")]
    {
        if plan.os == crate::paths::Os::MacOs && plan.bundle().is_some() {
            return Box::new(SmAppService);
        }
    }
    let _ = plan;
    Box::new(NoAppService)
}
