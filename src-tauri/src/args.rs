//! The app's command line: `--demo --data-dir DIR` as `tidings serve` takes them, plus what
//! the end-to-end test and screenshots need (`--open-settings`, `--simulate`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use tidings_server::StartError;
use tidings_server::engine::{Config, DemoConfig};

/// Tidings' menu-bar app.
#[derive(Debug, Parser)]
#[command(name = "tidings-app", version = tidings_platform::version::LONG, about)]
pub struct AppArgs {
    /// Serve fixture stores with a simulator instead of Apple Mail and Messages.
    #[arg(long)]
    pub demo: bool,

    /// The demo's directory (the fake home, settings.toml, the socket) [default: a temporary
    /// one, removed at Quit].
    #[arg(long, value_name = "DIR", requires = "demo")]
    pub data_dir: Option<PathBuf>,

    /// Seconds between simulated new mails and messages in demo mode, or `off`.
    #[arg(long, value_name = "SECS|off", default_value = "2", requires = "demo",
          value_parser = parse_simulate)]
    pub simulate: Simulate,

    /// The socket to serve on [default: as `tidings serve`].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Open the settings window at start (it opens by itself on a first run).
    #[arg(long)]
    pub open_settings: bool,

    /// The update feed to ask instead of the one built in (a fork's own, a test's).
    #[arg(long, value_name = "URL", hide = true)]
    pub update_feed: Option<String>,

    /// The update feed's public key (base64 of the minisign .pub text) instead of the one
    /// built in; for a fork's feed or a test's.
    #[arg(long, value_name = "KEY", hide = true)]
    pub update_pubkey: Option<String>,

    /// Log more (repeat for trace). Logs never hold senders, subjects or bodies.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `--simulate`: a period, or off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simulate(pub Option<Duration>);

fn parse_simulate(text: &str) -> Result<Simulate, String> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(Simulate(None));
    }
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.05..=86_400.0).contains(&secs) => {
            Ok(Simulate(Some(Duration::from_secs_f64(secs))))
        }
        _ => Err(format!(
            "--simulate takes seconds between 0.05 and 86400, or `off`; got `{text}`"
        )),
    }
}

impl AppArgs {
    /// The engine's start-up, as `tidings serve` builds it (crates/cli/src/serve.rs).
    pub fn config(&self) -> Result<Config, StartError> {
        let mut config = if self.demo {
            Config::demo(DemoConfig {
                data_dir: self.data_dir.clone(),
                simulate: self.simulate.0,
                conformance_controls: false,
            })
        } else {
            Config::for_user()?
        };
        if self.socket.is_some() {
            config.socket.clone_from(&self.socket);
        }
        Ok(config)
    }

    /// What the updater (`tidings-settings --updater`) is passed through from this command line.
    pub fn updater_args(&self) -> Vec<std::ffi::OsString> {
        let mut args = Vec::new();
        if let Some(feed) = &self.update_feed {
            args.extend(["--feed".into(), feed.into()]);
        }
        if let Some(key) = &self.update_pubkey {
            args.extend(["--pubkey".into(), key.into()]);
        }
        args
    }

    /// The log level from `-v`.
    pub fn log_level(&self) -> tracing::Level {
        match self.verbose {
            0 => tracing::Level::WARN,
            1 => tracing::Level::INFO,
            2 => tracing::Level::DEBUG,
            _ => tracing::Level::TRACE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        AppArgs::command().debug_assert();
    }

    #[test]
    fn demo_args_parse_as_tidings_serve_takes_them() {
        let args = AppArgs::try_parse_from([
            "tidings-app",
            "--demo",
            "--data-dir",
            "d",
            "--simulate",
            "off",
        ])
        .unwrap();
        assert!(args.demo);
        assert_eq!(args.data_dir, Some(PathBuf::from("d")));
        assert_eq!(args.simulate, Simulate(None));
    }

    #[test]
    fn data_dir_without_demo_is_refused() {
        let error = AppArgs::try_parse_from(["tidings-app", "--data-dir", "d"]).unwrap_err();
        assert!(error.to_string().contains("--demo"), "{error}");
    }

    #[test]
    fn a_bad_simulate_names_the_flag_and_the_range() {
        let error = AppArgs::try_parse_from(["tidings-app", "--demo", "--simulate", "0"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("between 0.05 and 86400"), "{error}");
    }
}
