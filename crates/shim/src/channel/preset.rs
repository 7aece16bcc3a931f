//! `--preset NAME`: the channel's types and senders from `[channel.presets.NAME]` in
//! settings.toml, read directly (a settings file is no store; see docs/decisions/channel.md).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::args::TYPES;

/// The same size limit the daemon applies to settings.toml.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// One preset: the same choices as the channel flags. The daemon checks the same table
/// (tidings-core's `ChannelPreset`), so `tidings status` reports a typo too.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Preset {
    /// Event type names; empty means both.
    pub types: Vec<String>,
    /// Sender addresses or phone numbers.
    pub from: Vec<String>,
    /// Sender domains.
    pub domains: Vec<String>,
}

/// Only the part of settings.toml the channel reads; the rest is the daemon's business.
#[derive(Deserialize)]
struct File {
    #[serde(default)]
    channel: Channel,
}

#[derive(Default, Deserialize)]
struct Channel {
    #[serde(default)]
    presets: BTreeMap<String, Preset>,
}

/// Why a preset could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    /// The config dir could not be worked out.
    #[error("{0}; set TIDINGS_CONFIG_DIR to the folder that holds settings.toml")]
    NoConfigDir(tidings_platform::PathError),
    /// The file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// settings.toml.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a regular file of at most 1 MiB.
    #[error("{} is not a regular file of at most 1 MiB", .0.display())]
    NotAFile(PathBuf),
    /// The file does not parse.
    #[error("{} is invalid: {message}", .path.display())]
    Invalid {
        /// settings.toml.
        path: PathBuf,
        /// The parser's message, with the line.
        message: String,
    },
    /// No such preset.
    #[error(
        "no preset `{name}` in {}; add [channel.presets.{name}] with `types`, `from` and \
         `domains` (known presets: {known})",
        .path.display()
    )]
    Unknown {
        /// The name asked for.
        name: String,
        /// settings.toml.
        path: PathBuf,
        /// The names there are, or "none".
        known: String,
    },
    /// A preset names a type we do not serve.
    #[error(
        "preset `{name}` names the unknown event type `{ty}`; use mail.received or \
         messages.received"
    )]
    UnknownType {
        /// The preset.
        name: String,
        /// The bad type.
        ty: String,
    },
}

/// The preset `name` from the settings.toml in Tidings' config dir.
pub fn load(name: &str) -> Result<Preset, PresetError> {
    let dir = tidings_platform::paths::config_dir().map_err(PresetError::NoConfigDir)?;
    load_from(&dir.join("settings.toml"), name)
}

/// The preset `name` from the settings file at `path`.
pub fn load_from(path: &Path, name: &str) -> Result<Preset, PresetError> {
    let io = |source| PresetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() || meta.len() > MAX_SETTINGS_BYTES {
        return Err(PresetError::NotAFile(path.to_path_buf()));
    }
    let mut text = String::new();
    file.take(MAX_SETTINGS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    let parsed: File = toml::from_str(&text).map_err(|e| PresetError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    let mut presets = parsed.channel.presets;
    let known = presets.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut preset = presets.remove(name).ok_or_else(|| PresetError::Unknown {
        name: name.to_owned(),
        path: path.to_path_buf(),
        known: if known.is_empty() {
            "none".into()
        } else {
            known
        },
    })?;
    if let Some(ty) = preset.types.iter().find(|t| !TYPES.contains(&t.as_str())) {
        return Err(PresetError::UnknownType {
            name: name.to_owned(),
            ty: ty.clone(),
        });
    }
    // A type named twice would open two streams of the same events, as `--type` twice
    // does not: keep the first of each.
    let mut seen = Vec::with_capacity(preset.types.len());
    preset.types.retain(|t| {
        let first = !seen.contains(t);
        seen.push(t.clone());
        first
    });
    Ok(preset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_preset_is_read_next_to_the_daemons_sections() {
        let (_dir, path) = write(
            "[mail]\nenabled = true\nallow = [\"acme.com\"]\n\n[channel.presets.work]\n\
             types = [\"mail.received\"]\ndomains = [\"acme.com\"]\n",
        );
        let preset = load_from(&path, "work").unwrap();
        assert_eq!(preset.types, ["mail.received"]);
        assert_eq!(preset.domains, ["acme.com"]);
    }

    #[test]
    fn a_type_named_twice_opens_one_stream() {
        let (_dir, path) = write(
            "[channel.presets.all]\ntypes = [\"messages.received\", \"mail.received\", \
             \"messages.received\"]\n",
        );
        let preset = load_from(&path, "all").unwrap();
        assert_eq!(preset.types, ["messages.received", "mail.received"]);
    }

    #[test]
    fn an_unknown_preset_names_the_ones_there_are() {
        let (_dir, path) = write("[channel.presets.work]\nfrom = [\"a@b.com\"]\n");
        let err = load_from(&path, "home").unwrap_err().to_string();
        assert!(
            err.contains("`home`") && err.contains("known presets: work"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_preset_is_refused_with_its_reason() {
        let (_dir, path) = write("[channel.presets.work]\nsenders = [\"a@b.com\"]\n");
        let err = load_from(&path, "work").unwrap_err().to_string();
        assert!(err.contains("senders") && err.contains("line 2"), "{err}");
        let (_dir, path) = write("[channel.presets.work]\ntypes = [\"mail\"]\n");
        let err = load_from(&path, "work").unwrap_err().to_string();
        assert!(err.contains("`mail`"), "{err}");
    }
}
