//! The daemon's log file: `tracing` lines in the platform's log directory
//! (`tidings_platform::paths::log_dir`: `~/Library/Logs/Tidings` on macOS,
//! `$XDG_STATE_HOME/tidings/logs` on Linux), one file a day, the oldest removed past
//! [`LOG_FILES_KEPT`]. `tidings serve` and the menu-bar app both write it through [`layer`].
//!
//! Info level and above only, whatever `-v` says: at info nothing names a subject, an address
//! or a handle (the test `log_file` in the daemon tests delivers fixture mail and checks), and
//! debug lines are for a terminal, not a file that stays around.

use std::path::{Path, PathBuf};

use tracing::level_filters::LevelFilter;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::FilterExt;
use tracing_subscriber::registry::LookupSpan;

use crate::logfilter::{ClientGone, log_filter};

/// How many daily files are kept (a week); older ones are removed as a new day starts.
pub const LOG_FILES_KEPT: usize = 7;

/// The files' name: `tidings.YYYY-MM-DD.log`.
pub const LOG_FILE_PREFIX: &str = "tidings";

/// Why the log file cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write logs in {}: {message}; set TIDINGS_LOG_DIR to another directory", .dir.display())]
pub struct LogFileError {
    /// The log directory.
    pub dir: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// Why the log file in the platform's log directory cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenLogError {
    /// The log directory cannot be worked out (no home directory, a relative override).
    #[error(transparent)]
    NoDir(#[from] tidings_platform::PathError),
    /// The directory or the file cannot be written.
    #[error(transparent)]
    Write(#[from] LogFileError),
}

/// The [`appender`] in the platform's log directory (`TIDINGS_LOG_DIR` overrides it): what
/// `tidings serve` and the app write.
pub fn open_in_log_dir() -> Result<RollingFileAppender, OpenLogError> {
    let dir = tidings_platform::paths::log_dir()?;
    Ok(appender(&dir)?)
}

/// A daily-rotating appender in `dir` (created if missing), keeping [`LOG_FILES_KEPT`] files.
pub fn appender(dir: &Path) -> Result<RollingFileAppender, LogFileError> {
    let error = |message: String| LogFileError {
        dir: dir.to_owned(),
        message,
    };
    std::fs::create_dir_all(dir).map_err(|e| error(e.to_string()))?;
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(LOG_FILE_PREFIX)
        .filename_suffix("log")
        .max_log_files(LOG_FILES_KEPT)
        .build(dir)
        .map_err(|e| error(e.to_string()))
}

/// The `tracing` layer that writes `appender`: plain text, at `level` but never above info
/// (nothing at info names a subject, an address or a handle), rmcp capped as on stderr.
pub fn layer<S>(appender: RollingFileAppender, level: LevelFilter) -> impl Layer<S> + Send + Sync
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_subscriber::fmt::layer()
        .with_writer(appender)
        .with_ansi(false)
        .with_target(false)
        .log_internal_errors(false)
        .with_filter(log_filter(level.min(LevelFilter::INFO)).and(ClientGone))
}
