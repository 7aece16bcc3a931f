//! The menu-bar icon's launch check: a hidden icon opens Settings, which says where to allow it.
//!
//! Hidden is macOS 26 until the user allows the app in the menu bar, or Linux with no tray.
//!
//! The look is `tidings_platform::MenuBarPresence` (the status item's window on macOS, the tray
//! hosts on Linux); this module decides when to look and what the answer does. The main thread
//! runs it from the event loop's timer (`ControlFlow::WaitUntil`), never by sleeping.
//! Decisions: docs/decisions/app.md, "A hidden menu-bar icon".

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use tidings_platform::{MenuBarPresence, Presence};

/// The first look, this long after the icon is made: macOS places a status item in the menu
/// bar asynchronously, so a look at once would find even an allowed item unplaced.
pub const FIRST_LOOK: Duration = Duration::from_secs(1);
/// Between looks while the icon is not shown.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);
/// The last look, this long after the icon is made: its answer stands (a hidden icon is acted
/// on only then, so an item the system places late is not reported hidden).
pub const LAST_LOOK: Duration = Duration::from_secs(5);

/// What the window is told about the icon: `menuBar` in its State.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum MenuBarView {
    /// The launch check has not answered yet.
    Checking,
    /// The icon is shown.
    Shown,
    /// The icon is hidden; `fix` says where to allow it (the platform's sentence).
    Hidden {
        /// One sentence.
        fix: &'static str,
    },
    /// The check could not tell; the window says nothing.
    Unknown,
}

/// The view the window is given, shared between the main thread (which looks) and the
/// commands (which answer `get_state`).
#[derive(Debug)]
pub struct MenuBarState(Mutex<MenuBarView>);

impl Default for MenuBarState {
    fn default() -> MenuBarState {
        MenuBarState(Mutex::new(MenuBarView::Checking))
    }
}

impl MenuBarState {
    /// The current view.
    pub fn get(&self) -> MenuBarView {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets the view; whether it changed.
    fn set(&self, view: MenuBarView) -> bool {
        let mut current = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let changed = *current != view;
        *current = view;
        changed
    }
}

/// The launch check: when to look next, until an answer.
#[derive(Debug)]
pub struct LaunchCheck {
    made: Instant,
    next: Instant,
}

/// What a look leads to.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Look again at this time (the event loop waits until then).
    LookAt(Instant),
    /// The check is over.
    Answer(Presence),
}

impl LaunchCheck {
    /// A check of an icon made at `made`.
    pub fn new(made: Instant) -> LaunchCheck {
        LaunchCheck {
            made,
            next: made + FIRST_LOOK,
        }
    }

    /// When the next look is due.
    pub fn next_look(&self) -> Instant {
        self.next
    }

    /// Looks if a look is due at `now`. Shown ends the check at once; Hidden and Unknown are
    /// looked at again every [`LOOK_EVERY`] until [`LAST_LOOK`], whose answer stands.
    pub fn look(&mut self, now: Instant, icon: &dyn MenuBarPresence) -> Step {
        if now < self.next {
            return Step::LookAt(self.next);
        }
        let presence = icon.presence();
        let last = self.made + LAST_LOOK;
        if presence == Presence::Shown || now >= last {
            return Step::Answer(presence);
        }
        self.next = (now + LOOK_EVERY).min(last);
        Step::LookAt(self.next)
    }
}

/// The launch check's answer: sets the window's view and says whether to open the window
/// (only when the icon is hidden: without it the user has no way to Settings but launching
/// Tidings again). Unknown opens nothing and shows nothing.
pub fn answer(presence: &Presence, icon: &dyn MenuBarPresence, state: &MenuBarState) -> bool {
    let (view, open) = match presence {
        Presence::Shown => {
            tracing::info!("the menu-bar icon is shown");
            (MenuBarView::Shown, false)
        }
        Presence::Hidden => {
            tracing::warn!(
                "the menu-bar icon is hidden; opening Settings to say where to allow it"
            );
            (
                MenuBarView::Hidden {
                    fix: icon.where_to_allow(),
                },
                true,
            )
        }
        Presence::Unknown(error) => {
            tracing::info!(%error, "cannot tell whether the menu-bar icon is shown");
            (MenuBarView::Unknown, false)
        }
    };
    state.set(view);
    open
}

/// When the window is asked for again while the icon was found hidden, one more look: the
/// user may have allowed it since (macOS places an allowed item at once). Whether the view
/// changed (the window is then told). A look that cannot tell keeps the notice.
pub fn look_again(icon: &dyn MenuBarPresence, state: &MenuBarState) -> bool {
    if !matches!(state.get(), MenuBarView::Hidden { .. }) {
        return false;
    }
    match icon.presence() {
        Presence::Shown => {
            tracing::info!("the menu-bar icon is shown now");
            state.set(MenuBarView::Shown)
        }
        Presence::Hidden | Presence::Unknown(_) => false,
    }
}

/// The icon over the app's life, on the main thread: what answers, and the launch check until
/// it has answered.
pub struct Watch {
    icon: Box<dyn MenuBarPresence>,
    check: Option<LaunchCheck>,
}

impl Watch {
    /// Starts the launch check of `icon`, made at `made`.
    pub fn new(icon: Box<dyn MenuBarPresence>, made: Instant) -> Watch {
        Watch {
            icon,
            check: Some(LaunchCheck::new(made)),
        }
    }

    /// When the event loop must wake for the next look; `None` once the check has answered.
    pub fn next_look(&self) -> Option<Instant> {
        self.check.as_ref().map(LaunchCheck::next_look)
    }

    /// On a wake-up of the event loop: a look if one is due. `Some` once, with the answer
    /// applied to `state`: whether to open the window.
    pub fn wake(&mut self, now: Instant, state: &MenuBarState) -> Option<bool> {
        let check = self.check.as_mut()?;
        let Step::Answer(presence) = check.look(now, self.icon.as_ref()) else {
            return None;
        };
        self.check = None;
        Some(answer(&presence, self.icon.as_ref(), state))
    }

    /// [`look_again`] at this icon.
    pub fn look_again(&self, state: &MenuBarState) -> bool {
        look_again(self.icon.as_ref(), state)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use tidings_platform::PresenceError;

    use super::*;

    /// A fake icon answering from a script, the last answer repeating; counts the looks.
    struct Scripted {
        answers: RefCell<Vec<Presence>>,
        looks: RefCell<usize>,
    }

    impl Scripted {
        fn new(answers: &[Presence]) -> Scripted {
            Scripted {
                answers: RefCell::new(answers.to_vec()),
                looks: RefCell::new(0),
            }
        }
    }

    impl MenuBarPresence for Scripted {
        fn presence(&self) -> Presence {
            *self.looks.borrow_mut() += 1;
            let mut answers = self.answers.borrow_mut();
            if answers.len() > 1 {
                answers.remove(0)
            } else {
                answers[0].clone()
            }
        }

        fn where_to_allow(&self) -> &'static str {
            "Allow it there."
        }
    }

    fn unknown() -> Presence {
        Presence::Unknown(PresenceError::NoWindow)
    }

    /// Runs a launch check to its answer, each look exactly when the check asked for it, as
    /// the event loop's timer does; the times of the looks are returned with the answer.
    fn run(icon: &Scripted) -> (Presence, Vec<Duration>) {
        let made = Instant::now();
        let mut check = LaunchCheck::new(made);
        let mut looks = Vec::new();
        loop {
            let now = check.next_look();
            looks.push(now - made);
            match check.look(now, icon) {
                Step::LookAt(next) => assert!(next > now, "the next look is later"),
                Step::Answer(presence) => return (presence, looks),
            }
        }
    }

    #[test]
    fn a_hidden_icon_opens_the_window_with_where_to_allow_it() {
        let icon = Scripted::new(&[Presence::Hidden]);
        let (presence, looks) = run(&icon);
        assert_eq!(presence, Presence::Hidden);
        // Hidden is believed only at the last look: an item placed late is not reported.
        assert_eq!(looks.last(), Some(&LAST_LOOK));
        assert_eq!(looks.first(), Some(&FIRST_LOOK));
        let state = MenuBarState::default();
        assert!(answer(&presence, &icon, &state), "the window opens");
        assert_eq!(
            state.get(),
            MenuBarView::Hidden {
                fix: "Allow it there."
            }
        );
        let json = serde_json::to_value(state.get()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({ "state": "hidden", "fix": "Allow it there." })
        );
    }

    #[test]
    fn a_shown_icon_opens_nothing_and_ends_the_check_at_once() {
        // Not placed at the first look, placed at the second.
        let icon = Scripted::new(&[Presence::Hidden, Presence::Shown]);
        let (presence, looks) = run(&icon);
        assert_eq!(presence, Presence::Shown);
        assert_eq!(looks, [FIRST_LOOK, FIRST_LOOK + LOOK_EVERY]);
        let state = MenuBarState::default();
        assert!(!answer(&presence, &icon, &state), "no window");
        assert_eq!(state.get(), MenuBarView::Shown);
    }

    #[test]
    fn an_unknown_icon_opens_nothing_and_says_nothing() {
        let icon = Scripted::new(&[unknown()]);
        let (presence, _) = run(&icon);
        assert_eq!(presence, unknown());
        let state = MenuBarState::default();
        assert!(!answer(&presence, &icon, &state), "no window");
        assert_eq!(state.get(), MenuBarView::Unknown);
        assert_eq!(
            serde_json::to_value(state.get()).unwrap(),
            serde_json::json!({ "state": "unknown" })
        );
    }

    #[test]
    fn a_look_before_its_time_does_not_ask() {
        let icon = Scripted::new(&[Presence::Shown]);
        let made = Instant::now();
        let mut check = LaunchCheck::new(made);
        assert_eq!(check.look(made, &icon), Step::LookAt(made + FIRST_LOOK));
        assert_eq!(*icon.looks.borrow(), 0);
    }

    #[test]
    fn the_watch_answers_once_at_its_last_look() {
        let made = Instant::now();
        let mut watch = Watch::new(Box::new(Scripted::new(&[Presence::Hidden])), made);
        let state = MenuBarState::default();
        assert_eq!(watch.wake(made, &state), None, "nothing due yet");
        let mut answers = Vec::new();
        while let Some(next) = watch.next_look() {
            answers.push(watch.wake(next, &state));
        }
        // Four looks say nothing; the fifth, at the last look, opens the window.
        assert_eq!(answers, [None, None, None, None, Some(true)]);
        assert!(matches!(state.get(), MenuBarView::Hidden { .. }));
        assert_eq!(
            watch.wake(made + LAST_LOOK * 2, &state),
            None,
            "answered once"
        );
    }

    #[test]
    fn the_notice_goes_once_the_icon_is_allowed() {
        let state = MenuBarState::default();
        // Nothing to look again at unless it was hidden.
        let shown = Scripted::new(&[Presence::Shown]);
        assert!(!look_again(&shown, &state));
        assert_eq!(*shown.looks.borrow(), 0);

        let icon = Scripted::new(&[Presence::Hidden, unknown(), Presence::Shown]);
        answer(&Presence::Hidden, &icon, &state);
        assert!(!look_again(&icon, &state), "still hidden");
        assert!(!look_again(&icon, &state), "cannot tell: the notice stays");
        assert!(matches!(state.get(), MenuBarView::Hidden { .. }));
        assert!(look_again(&icon, &state), "allowed since");
        assert_eq!(state.get(), MenuBarView::Shown);
    }
}
