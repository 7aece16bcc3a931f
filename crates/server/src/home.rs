//! Paths shown to clients with the home directory written as `~`: a full path names the
//! user's account (`/Users/ana/…`), which no agent needs to learn.

use std::path::{Path, PathBuf};

/// `path` with the home directory written as `~`, when it is under it.
pub fn home_relative(path: &Path) -> String {
    relative_to(path, home().as_deref())
}

/// `text` with every mention of the home directory written as `~` (store errors quote their
/// path).
pub(crate) fn without_home(text: &str) -> String {
    replace_home(text, home().as_deref())
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty() && h != "/")
        .map(PathBuf::from)
}

fn relative_to(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

fn replace_home(text: &str, home: Option<&Path>) -> String {
    match home.and_then(Path::to_str) {
        Some(home) => text.replace(&format!("{}/", home.trim_end_matches('/')), "~/"),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_directory_becomes_a_tilde() {
        let home = Some(Path::new("/Users/ana"));
        assert_eq!(
            relative_to(Path::new("/Users/ana/Library/Messages/chat.db"), home),
            "~/Library/Messages/chat.db"
        );
        assert_eq!(relative_to(Path::new("/etc/x"), home), "/etc/x");
        assert_eq!(
            replace_home(
                "Messages store at /Users/ana/Library/Messages/chat.db is empty",
                home
            ),
            "Messages store at ~/Library/Messages/chat.db is empty"
        );
        // Another user whose name starts with ours is not ours.
        assert_eq!(replace_home("/Users/anabel/x", home), "/Users/anabel/x");
    }
}
