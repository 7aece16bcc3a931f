//! Whether an update is signed by this copy's developer. macOS ties Full Disk Access to the
//! app's code signature (its team and identifier): an update signed otherwise would install
//! and then read nothing. So a check unpacks the archive's app, reads its signature through
//! [`CodeSigning`] (`codesign` on macOS) and refuses one that differs. On Linux nothing is
//! code-signed and there is no grant to keep; the tests run the same path with a signer
//! standing in.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tidings_platform::install::current_app_bundle;

use tidings_platform::identity::{CodeSigning, Signing};
use tidings_server::app::updates::FailReason;

use super::failure::Failure;

/// This copy's signature and the way to read another's.
pub struct Developer {
    /// Read when an archive is first checked: a check that finds nothing new runs no
    /// `codesign`.
    this_copy: OnceLock<Option<Signing>>,
    signing: Box<dyn CodeSigning>,
}

impl Developer {
    /// This running copy (its bundle on macOS), read through `signing`.
    pub fn of_this_copy(signing: Box<dyn CodeSigning>) -> Developer {
        Developer {
            this_copy: OnceLock::new(),
            signing,
        }
    }

    /// A copy signed as `this_copy` says (the tests' stand-in for a signed Mac).
    #[cfg(test)]
    pub fn new(this_copy: Option<Signing>, signing: Box<dyn CodeSigning>) -> Developer {
        Developer {
            this_copy: OnceLock::from(this_copy),
            signing,
        }
    }

    /// This copy's signature, read once.
    fn this_copy(&self) -> Option<&Signing> {
        self.this_copy
            .get_or_init(|| current_app_bundle().and_then(|bundle| self.signing.signing(&bundle)))
            .as_ref()
    }

    /// Who signed the app in `archive` (`TEAM:identifier`), refused unless it is this copy's
    /// developer. `Ok(None)` when this copy is not code-signed: there is no grant to keep.
    pub fn check_archive(&self, version: &str, archive: &[u8]) -> Result<Option<String>, Failure> {
        let Some(ours) = self.this_copy() else {
            return Ok(None);
        };
        let unpacked = tempfile::tempdir().map_err(|e| Failure::io(&std::env::temp_dir(), &e))?;
        let app = unpack_app(archive, unpacked.path()).map_err(|e| {
            Failure::new(
                FailReason::Malformed,
                format!("the archive of {version} holds no app: {e}"),
            )
        })?;
        let theirs = self.signing.signing(&app);
        match &theirs {
            Some(theirs) if ours.same_developer(theirs) => Ok(theirs.label()),
            _ => Err(Failure::new(
                FailReason::Identity,
                format!(
                    "{version} is signed by {}, this copy by {}: installing it would lose Full \
                     Disk Access, so it was not kept",
                    theirs
                        .as_ref()
                        .map_or_else(|| "no one".to_owned(), described),
                    described(ours)
                ),
            )),
        }
    }
}

/// A signature as the refusal names it: its label, or its identifier without a team.
fn described(signing: &Signing) -> String {
    signing
        .label()
        .unwrap_or_else(|| format!("{} (no team)", signing.identifier))
}

/// Unpacks a `.tar.gz` into `into` (the tar crate refuses paths that climb out) and returns
/// its top-level `*.app` folder.
fn unpack_app(archive: &[u8], into: &Path) -> std::io::Result<PathBuf> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    tar.unpack(into)?;
    std::fs::read_dir(into)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.is_dir() && path.extension().is_some_and(|e| e == "app"))
        .ok_or_else(|| std::io::Error::other("no top-level .app folder"))
}
