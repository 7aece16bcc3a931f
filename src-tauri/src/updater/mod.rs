//! `tidings-settings --updater check|install`: the update check and the install, through
//! Tauri's updater plugin, in a short-lived process the tray starts (the tray links no Tauri;
//! docs/decisions/updates.md). A check asks the feed, downloads a newer version, checks its
//! signature against the key built into the app and its code signature against this copy's,
//! and keeps it (`stage`) until the user says Install and Restart; every outcome is recorded
//! for the menu, the window and the doctor (`tidings_server::app::updates`) and printed as
//! one JSON line on stdout for the tray.
//!
//! Modules: `failure` (the plugin's errors in a person's words), `stage` (the update kept
//! until the user's word, and the archive's app), `developer` (whether an update is signed
//! by this copy's developer, so Full Disk Access carries over).

mod developer;
mod failure;
mod stage;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::{Parser, ValueEnum};
use serde::Serialize;
use tauri::{AppHandle, Runtime};
use tauri_plugin_updater::{Update, UpdaterExt};
use tidings_platform::identity::CodeSigning;
use tidings_server::app::updates::{self, FailReason, LastCheck, Outcome, Staged};

use developer::Developer;
use failure::Failure;

/// How long the feed gets to answer.
pub const FEED_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the archive gets to arrive (a slow link, a large universal app).
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The largest archive downloaded: a release is tens of MiB; a feed pointing at more is
/// refused before it fills the disk or the memory.
pub const MAX_ARCHIVE_BYTES: u64 = 512 * 1024 * 1024;

/// `tidings-settings --updater …` (started by the tray, never by hand).
#[derive(Debug, Parser)]
#[command(name = "tidings-settings --updater", no_binary_name = true)]
pub struct UpdaterArgs {
    /// Check the feed, or install the update a check kept.
    #[arg(long, value_enum)]
    pub updater: Action,

    /// The updates folder (beside settings.toml).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// The feed to ask instead of the one in tauri.conf.json (a fork's, or a test's).
    #[arg(long, value_name = "URL")]
    pub feed: Option<url::Url>,

    /// The public key (base64 of the minisign .pub text) instead of the app's.
    #[arg(long, value_name = "KEY")]
    pub pubkey: Option<String>,

    /// Seconds the feed gets to answer.
    #[arg(long, value_name = "SECS", default_value_t = FEED_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    Check,
    Install,
}

/// What one run needs besides the app: where to keep things, the bounds, and how to read code
/// signatures.
pub struct Options {
    pub dir: PathBuf,
    pub feed: Option<url::Url>,
    pub feed_timeout: Duration,
    pub download_timeout: Duration,
    pub max_bytes: u64,
    pub developer: Developer,
}

impl Options {
    /// The options for `args`, with this OS's code signing.
    pub fn of(args: &UpdaterArgs) -> Options {
        Options {
            dir: args.dir.clone(),
            feed: args.feed.clone(),
            feed_timeout: Duration::from_secs(args.timeout_secs),
            download_timeout: DOWNLOAD_TIMEOUT,
            max_bytes: MAX_ARCHIVE_BYTES,
            developer: Developer::of_this_copy(code_signing()),
        }
    }
}

/// This OS's code signing: `codesign` on macOS, none on Linux.
fn code_signing() -> Box<dyn CodeSigning> {
    #[cfg(target_os = "macos")]
    return Box::new(tidings_platform::identity::Codesign::new(
        tidings_platform::SystemRunner,
    ));
    #[cfg(not(target_os = "macos"))]
    Box::new(tidings_platform::identity::NoCodeSigning)
}

/// What `install` printed for the tray.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// The version now in place (`None` when nothing was installed).
    pub installed: Option<String>,
    /// Why not, in a person's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs `args` in a Tauri app of its own, with no window, and exits. The outcome is the JSON
/// line on stdout; the exit code is non-zero only when the app itself could not start.
pub fn main(args: &[std::ffi::OsString], context: tauri::Context) -> ExitCode {
    let args = match UpdaterArgs::try_parse_from(args) {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(2);
        }
    };
    let mut plugin = tauri_plugin_updater::Builder::new();
    if let Some(key) = &args.pubkey {
        plugin = plugin.pubkey(key);
    }
    let built = tauri::Builder::default()
        .plugin(plugin.build())
        .setup(move |app| {
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Prohibited);
            let app = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                let options = Options::of(&args);
                let line = match args.updater {
                    Action::Check => serde_json::to_string(&check(&app, &options).await),
                    Action::Install => serde_json::to_string(&install(&app, &options)),
                };
                println!("{}", line.expect("an outcome serializes"));
                app.exit(0);
            });
            Ok(())
        })
        .build(context);
    match built {
        Ok(app) => ExitCode::from(u8::try_from(app.run_return(|_, _| {})).unwrap_or(1)),
        Err(error) => {
            eprintln!("tidings-settings: the updater cannot start: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Asks the feed; a newer version is downloaded, checked and kept. Never installs anything.
/// The outcome is recorded in the updates folder (a record that cannot be written is the
/// outcome instead).
pub async fn check<R: Runtime>(app: &AppHandle<R>, options: &Options) -> LastCheck {
    let current = app.package_info().version.to_string();
    let outcome = match check_feed(app, options).await {
        Ok(outcome) => outcome,
        Err(failure) => failure.outcome(),
    };
    let mut check = LastCheck {
        checked_at_ms: tidings_server::state::now_ms(),
        current,
        outcome,
    };
    if let Err(error) = updates::write_last_check(&options.dir, &check) {
        check.outcome = Failure::io(&options.dir, &error).outcome();
    }
    check
}

async fn check_feed<R: Runtime>(app: &AppHandle<R>, options: &Options) -> Result<Outcome, Failure> {
    // The feed's version, whatever it is: the plugin offers only a newer one, and says
    // nothing of an older one, which the user should hear about.
    let offered = Arc::new(Mutex::new(None::<semver::Version>));
    let seen = offered.clone();
    let updater = updater(app, options, move |current, release| {
        let newer = release.version > current;
        *seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(release.version);
        newer
    })?;
    let found = updater.check().await.map_err(Failure::feed)?;
    let offered = offered
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(mut update) = found else {
        let current = &app.package_info().version;
        return Ok(match offered {
            Some(version) if version < *current => Outcome::Older {
                offered: version.to_string(),
            },
            newest => Outcome::UpToDate {
                newest: newest.map(|v| v.to_string()),
            },
        });
    };
    if update.signature.trim().is_empty() {
        return Err(Failure::new(
            FailReason::Unsigned,
            format!("the feed offers {} without a signature", update.version),
        ));
    }
    update.timeout = Some(options.download_timeout);
    let bytes = download(&update, options.max_bytes).await?;
    let signed_by = options.developer.check_archive(&update.version, &bytes)?;
    stage::keep(&options.dir, &update, &bytes).map_err(|e| Failure::io(&options.dir, &e))?;
    Ok(Outcome::Ready(Staged {
        version: update.version.clone(),
        notes: update.body.clone(),
        signed_by,
    }))
}

/// The plugin's updater for this run: the feed (the app's, or `options.feed`), its timeout,
/// and `newer`, which decides whether the feed's release is an update.
fn updater<R: Runtime>(
    app: &AppHandle<R>,
    options: &Options,
    newer: impl Fn(semver::Version, tauri_plugin_updater::RemoteRelease) -> bool + Send + Sync + 'static,
) -> Result<tauri_plugin_updater::Updater, Failure> {
    let mut builder = app
        .updater_builder()
        .timeout(options.feed_timeout)
        .version_comparator(newer);
    if let Some(feed) = &options.feed {
        builder = builder
            .endpoints(vec![feed.clone()])
            .map_err(Failure::feed)?;
    }
    builder.build().map_err(Failure::feed)
}

/// The archive, its signature checked by the plugin, refused once it passes `max_bytes`.
async fn download(update: &Update, max_bytes: u64) -> Result<Vec<u8>, Failure> {
    let received = AtomicU64::new(0);
    let too_large = tokio::sync::Notify::new();
    let downloading = update.download(
        |chunk, announced| {
            let total = received.fetch_add(chunk as u64, Ordering::Relaxed) + chunk as u64;
            if total > max_bytes || announced.is_some_and(|n| n > max_bytes) {
                too_large.notify_one();
            }
        },
        || {},
    );
    let too_large_failure = || {
        Failure::new(
            FailReason::TooLarge,
            format!(
                "the update archive is larger than {} MiB, the most Tidings downloads",
                max_bytes / (1024 * 1024)
            ),
        )
    };
    // Stopped as soon as it passes the bound; one that ends in the same step is caught after.
    let bytes = tokio::select! {
        biased;
        () = too_large.notified() => return Err(too_large_failure()),
        result = downloading => result.map_err(Failure::archive)?,
    };
    if bytes.len() as u64 > max_bytes {
        return Err(too_large_failure());
    }
    Ok(bytes)
}

/// Installs the update a check kept, after checking its signature again: the app's bundle is
/// replaced (macOS). The tray restarts the app afterwards. The Linux twin checks the kept
/// archive the same way and stops there: a package manager installs Tidings on Linux.
pub fn install<R: Runtime>(app: &AppHandle<R>, options: &Options) -> Installed {
    match install_kept(app, options) {
        Ok(version) => Installed {
            installed: Some(version),
            error: None,
        },
        Err(error) => Installed {
            installed: None,
            error: Some(error),
        },
    }
}

fn install_kept<R: Runtime>(app: &AppHandle<R>, options: &Options) -> Result<String, String> {
    let kept = stage::read(&options.dir)?;
    let updater = updater(app, options, |current, release| release.version > current)
        .map_err(|f| f.message)?;
    let Some(update) = updater
        .restore_update(kept.release)
        .map_err(|e| format!("the kept update no longer reads: {e}; check for updates again"))?
    else {
        stage::clear(&options.dir);
        return Err("the kept update is not newer than this copy".to_owned());
    };
    update.verify(&kept.archive).map_err(|e| {
        format!("the kept archive failed its signature check ({e}); check for updates again")
    })?;
    options
        .developer
        .check_archive(&update.version, &kept.archive)
        .map_err(|f| f.message)?;
    if cfg!(target_os = "macos") {
        update
            .install(&kept.archive)
            .map_err(|e| format!("installing {} failed: {e}", update.version))?;
    } else {
        return Err(format!(
            "{} checks out, but on Linux Tidings is updated by the package it was installed from",
            update.version
        ));
    }
    stage::clear(&options.dir);
    Ok(update.version)
}
