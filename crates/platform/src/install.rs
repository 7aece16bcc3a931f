//! Where this copy of Tidings came from, for updates: a Homebrew cask ([`InstallSource`],
//! which updates through `brew upgrade` rather than replacing itself) and the `.app` it runs
//! from ([`app_bundle_of`]), whose signature decides whether Full Disk Access carries over.

use std::path::{Path, PathBuf};

/// Homebrew's prefixes on macOS: Apple silicon, then Intel.
pub const HOMEBREW_PREFIXES: &[&str] = &["/opt/homebrew", "/usr/local"];

/// The cask's token (packaging/homebrew/tidings.rb).
pub const CASK: &str = "tidings";

/// What a Homebrew copy runs to update, the cask naming itself.
pub const BREW_UPGRADE: &str = "brew upgrade --cask tidings";

/// How this copy was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallSource {
    /// By the Homebrew cask, which keeps its record in `caskroom`: Homebrew updates it
    /// ([`BREW_UPGRADE`]), or its record would name a version that is gone.
    Homebrew {
        /// `<prefix>/Caskroom/tidings`.
        caskroom: PathBuf,
    },
    /// From the .dmg or .zip (or a build): it updates itself.
    Direct,
}

impl InstallSource {
    /// Whether Homebrew installed it.
    pub fn is_homebrew(&self) -> bool {
        matches!(self, InstallSource::Homebrew { .. })
    }
}

/// How this copy was installed, judged by a `Caskroom/tidings` folder under any of
/// `prefixes` (the first found wins).
pub fn install_source_under(prefixes: &[&Path]) -> InstallSource {
    prefixes
        .iter()
        .map(|prefix| prefix.join("Caskroom").join(CASK))
        .find(|caskroom| caskroom.is_dir())
        .map_or(InstallSource::Direct, |caskroom| InstallSource::Homebrew {
            caskroom,
        })
}

/// How this copy was installed: [`install_source_under`] the [`HOMEBREW_PREFIXES`] on macOS;
/// always [`InstallSource::Direct`] elsewhere, where Homebrew has no casks.
pub fn install_source() -> InstallSource {
    if cfg!(target_os = "macos") {
        let prefixes: Vec<&Path> = HOMEBREW_PREFIXES.iter().map(Path::new).collect();
        install_source_under(&prefixes)
    } else {
        InstallSource::Direct
    }
}

/// The `X.app` whose `Contents/MacOS` holds `exe` (the app, the `tidings` CLI and the shim
/// all live there); `None` for a bare binary (a development build, the Linux app).
pub fn app_bundle_of(exe: &Path) -> Option<PathBuf> {
    let macos_dir = exe.parent()?;
    let contents = macos_dir.parent()?;
    let bundle = contents.parent()?;
    (macos_dir.file_name()? == "MacOS"
        && contents.file_name()? == "Contents"
        && bundle.extension()? == "app")
        .then(|| bundle.to_path_buf())
}

/// The `.app` this process runs from ([`app_bundle_of`] its executable, links resolved:
/// Homebrew's `bin/tidings` links into the bundle).
pub fn current_app_bundle() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    app_bundle_of(&exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caskroom_folder_under_either_prefix_means_homebrew() {
        let silicon = tempfile::tempdir().unwrap();
        let intel = tempfile::tempdir().unwrap();
        let prefixes = [silicon.path(), intel.path()];
        assert_eq!(install_source_under(&prefixes), InstallSource::Direct);
        // Another cask, or a file where the folder would be, is not ours.
        std::fs::create_dir_all(intel.path().join("Caskroom/firefox")).unwrap();
        std::fs::write(intel.path().join("Caskroom/tidings"), "").unwrap();
        assert_eq!(install_source_under(&prefixes), InstallSource::Direct);
        std::fs::create_dir_all(silicon.path().join("Caskroom/tidings/0.1.0")).unwrap();
        let source = install_source_under(&prefixes);
        assert!(source.is_homebrew());
        assert_eq!(
            source,
            InstallSource::Homebrew {
                caskroom: silicon.path().join("Caskroom/tidings")
            }
        );
        assert_eq!(install_source_under(&[]), InstallSource::Direct);
    }

    #[test]
    fn the_bundle_is_the_app_whose_contents_macos_holds_the_executable() {
        assert_eq!(
            app_bundle_of(Path::new(
                "/Applications/Tidings.app/Contents/MacOS/tidings"
            )),
            Some(PathBuf::from("/Applications/Tidings.app"))
        );
        assert_eq!(app_bundle_of(Path::new("/usr/local/bin/tidings")), None);
        assert_eq!(
            app_bundle_of(Path::new("/x/Tidings.app/Contents/Resources/tidings")),
            None
        );
        assert_eq!(
            app_bundle_of(Path::new("/x/Tidings/Contents/MacOS/t")),
            None
        );
        assert_eq!(app_bundle_of(Path::new("tidings")), None);
    }

    #[test]
    fn linux_copies_are_never_homebrew() {
        if cfg!(not(target_os = "macos")) {
            assert_eq!(install_source(), InstallSource::Direct);
        }
    }
}
