//! The updater plugin's errors as a reason and a sentence: what went wrong with the feed or
//! the archive, never a stack of library words. Nothing here is personal (the feed's address
//! is the release's, not the user's).

use std::path::Path;

use tauri_plugin_updater::Error;
use tidings_server::app::updates::{FailReason, Outcome};

/// A check that came to nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: FailReason,
    pub message: String,
}

impl Failure {
    pub fn new(reason: FailReason, message: impl Into<String>) -> Failure {
        Failure {
            reason,
            message: message.into(),
        }
    }

    /// The outcome recorded for it.
    pub fn outcome(self) -> Outcome {
        Outcome::Failed {
            reason: self.reason,
            message: self.message,
        }
    }

    /// The updates folder could not be written.
    pub fn io(dir: &Path, error: &std::io::Error) -> Failure {
        Failure::new(
            FailReason::Io,
            format!("cannot write {}: {error}", dir.display()),
        )
    }

    /// An error asking the feed.
    pub fn feed(error: Error) -> Failure {
        match error {
            Error::Reqwest(e) => network("the update feed", &e),
            Error::ReleaseNotFound => Failure::new(
                FailReason::Http,
                "the update feed answered without a release (an HTTP error status)",
            ),
            Error::Serialization(e) => Failure::new(
                FailReason::Malformed,
                format!("the update feed is not an update manifest: {e}"),
            ),
            Error::Semver(e) => Failure::new(
                FailReason::Malformed,
                format!("the update feed's version is not a version: {e}"),
            ),
            Error::TargetNotFound(target) => Failure::new(
                FailReason::Malformed,
                format!("the update feed has no entry for this Mac ({target})"),
            ),
            Error::TargetsNotFound(targets) => Failure::new(
                FailReason::Malformed,
                format!(
                    "the update feed has no entry for this Mac ({})",
                    targets.join(" or ")
                ),
            ),
            Error::InsecureTransportProtocol => Failure::new(
                FailReason::Malformed,
                "the update feed's address must be https",
            ),
            other => Failure::new(FailReason::Unreachable, other.to_string()),
        }
    }

    /// An error fetching or checking the archive.
    pub fn archive(error: Error) -> Failure {
        match error {
            Error::Reqwest(e) => network("the update archive", &e),
            Error::Network(status) => Failure::new(
                FailReason::Http,
                format!("the update archive could not be downloaded: {status}"),
            ),
            Error::Minisign(_)
            | Error::Base64(_)
            | Error::SignatureUtf8(_)
            | Error::MissingSignedVersion => Failure::new(
                FailReason::Signature,
                format!(
                    "the update's signature does not match the key built into Tidings ({error}); \
                     nothing was installed"
                ),
            ),
            // The signed version differs from the announced one, and any other refusal of
            // the bytes.
            other => Failure::new(
                FailReason::Signature,
                format!("the update was refused: {other}; nothing was installed"),
            ),
        }
    }
}

/// A transport error in words: timed out, no connection, or a body that is not JSON.
fn network(what: &str, error: &reqwest::Error) -> Failure {
    if error.is_timeout() {
        Failure::new(
            FailReason::Timeout,
            format!("{what} did not answer in time"),
        )
    } else if error.is_decode() {
        Failure::new(
            FailReason::Malformed,
            format!("{what} is not an update manifest (not JSON)"),
        )
    } else if error.is_status() {
        Failure::new(FailReason::Http, format!("{what} answered {error}"))
    } else {
        Failure::new(
            FailReason::Unreachable,
            format!("{what} cannot be reached: {}", root_cause(error)),
        )
    }
}

/// The innermost error's words ("Connection refused"), where reqwest's own are generic.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
