//! The menu-bar app, `tidings-app --demo` (release build) with its window closed, idle under
//! Xvfb and a private D-Bus session (as scripts/app-e2e.sh sets them up, with trayer as the
//! tray host when it is installed), beside the headless daemon idle over the same window.
//! Skipped, with a line that says why, when the display stack or the app build is missing.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::daemon::{Daemon, private_tmp, tidings_bin};
use crate::procfs;
use crate::report::{Section, Sum};
use crate::stats::{env_or, ratio};

/// Why the part cannot run here, if it cannot.
pub fn missing() -> Option<String> {
    let absent: Vec<&str> = ["Xvfb", "dbus-daemon"]
        .into_iter()
        .filter(|t| which(t).is_none())
        .collect();
    if !absent.is_empty() {
        return Some(format!(
            "app: skipped: no display stack ({} not installed; scripts/install-deps.sh installs it)",
            absent.join(", ")
        ));
    }
    if !app_bin().exists() {
        return Some(format!(
            "app: skipped: {} is not built (`cargo build --release -p tidings-app`; `make bench` \
             builds it when the display stack is there)",
            app_bin().display()
        ));
    }
    None
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The release app beside the release daemon, or `TIDINGS_BENCH_APP_BIN`.
fn app_bin() -> PathBuf {
    std::env::var_os("TIDINGS_BENCH_APP_BIN").map_or_else(
        || tidings_bin().with_file_name("tidings-app"),
        PathBuf::from,
    )
}

/// Children killed (by their own pid) when dropped.
struct Kids(Vec<Child>, Vec<u32>);

impl Drop for Kids {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
        for pid in &self.1 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    let secs = env_or("TIDINGS_BENCH_APP_SECS", 60);
    let mut kids = Kids(Vec::new(), Vec::new());
    // A free display number: no X socket for it yet.
    let display = (90..200)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .context("no free X display number")?;
    kids.0.push(
        Command::new("Xvfb")
            .args([
                &format!(":{display}"),
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(ctx.log("app-xvfb"))?)
            .spawn()
            .context("start Xvfb")?,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !Path::new(&format!("/tmp/.X11-unix/X{display}")).exists() {
        if Instant::now() > deadline {
            bail!("Xvfb did not come up on :{display}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // A private session bus: its address and pid on stdout.
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
        .stdout(Stdio::piped())
        .spawn()
        .context("start dbus-daemon")?;
    let mut lines = BufReader::new(bus.stdout.take().context("dbus stdout")?).lines();
    let address = lines.next().context("no bus address")??;
    let bus_pid: u32 = lines.next().context("no bus pid")??.trim().parse()?;
    let _ = bus.wait();
    kids.1.push(bus_pid);
    if which("trayer").is_some() {
        kids.0.push(
            Command::new("trayer")
                .args([
                    "--edge",
                    "top",
                    "--align",
                    "right",
                    "--SetDockType",
                    "false",
                ])
                .env("DISPLAY", format!(":{display}"))
                .env("DBUS_SESSION_BUS_ADDRESS", &address)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .context("start trayer")?,
        );
    }
    let dir = private_tmp("tidings-bench-app.")?;
    let home = dir.path().join("demo");
    crate::store::empty(&home)?;
    let app = Command::new(app_bin())
        .args(["--demo", "--simulate", "off", "--data-dir"])
        .arg(&home)
        .env("DISPLAY", format!(":{display}"))
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(ctx.log("app"))?)
        .spawn()
        .context("start tidings-app")?;
    let app_pid = app.id();
    kids.0.push(app);
    // The headless daemon, idle over the same window: the baseline.
    let daemon = Daemon::fresh(&ctx.log("app-daemon"))?;
    let socket = home.join("tidings.sock");
    crate::wire::connect_by(&socket, Instant::now() + Duration::from_secs(60))
        .context("the app's socket never accepted")?;
    std::thread::sleep(Duration::from_secs(10));
    let tree = procfs::tree(app_pid);
    let cpu = |pids: &[u32]| {
        pids.iter()
            .filter_map(|p| procfs::cpu_ms(*p).ok())
            .sum::<f64>()
    };
    let (app_before, daemon_before) = (cpu(&tree), procfs::cpu_ms(daemon.pid)?);
    std::thread::sleep(Duration::from_secs(secs));
    let tree_after = procfs::tree(app_pid);
    if !tree_after.contains(&app_pid) || procfs::cpu_ms(app_pid).is_err() {
        bail!("the app exited; see {}", ctx.log("app").display());
    }
    let per_min = 60.0 / secs as f64;
    let app_cpu = (cpu(&tree_after) - app_before) * per_min;
    let daemon_cpu = (procfs::cpu_ms(daemon.pid)? - daemon_before) * per_min;
    let app_rss = procfs::rss_mib(app_pid)?;
    let tree_rss: f64 = tree_after
        .iter()
        .filter_map(|p| procfs::rss_mib(*p).ok())
        .sum();
    let daemon_rss = procfs::rss_mib(daemon.pid)?;
    let tree_dirty: f64 = tree_after
        .iter()
        .filter_map(|p| procfs::dirty_mib(*p).ok())
        .sum();
    let daemon_dirty = procfs::dirty_mib(daemon.pid)?;
    let mut section = Section::new(
        "app",
        "The app, window closed, idle",
        vec![
            "process",
            "CPU ms per minute",
            "RSS",
            "written memory (footprint)",
            "processes",
        ],
    );
    section.rows = vec![
        vec![
            "`tidings serve --demo` (baseline)".into(),
            format!("{daemon_cpu:.0}"),
            format!("{daemon_rss:.1} MiB"),
            format!("{daemon_dirty:.1} MiB"),
            "1".into(),
        ],
        vec![
            "`tidings-app --demo`, window closed".into(),
            format!("{app_cpu:.0}"),
            format!("{app_rss:.1} MiB (with children {tree_rss:.1} MiB)"),
            format!("{tree_dirty:.1} MiB"),
            tree_after.len().to_string(),
        ],
    ];
    if std::env::var_os("TIDINGS_BENCH_APP_BIN").is_some() {
        section.notes.push(format!(
            "The app binary: {} (`TIDINGS_BENCH_APP_BIN`).",
            app_bin().display()
        ));
    }
    section.notes.push(format!(
        "Over {secs} s, after 10 s to settle, under Xvfb and a private D-Bus session{}; no \
         stream. Both on demo stores, side by side. Written memory is the pages each process \
         wrote and shares with none (`Private_Dirty` of `smaps_rollup`: heap, stacks, \
         written data), close to the footprint macOS reports; RSS adds the clean code pages \
         of the libraries it runs (GTK and the app's own code), which on a Mac are the \
         system's AppKit. The window is a process of its own, started only while it is open: \
         only it loads WebKitGTK.",
        if which("trayer").is_some() {
            " with trayer as the tray host"
        } else {
            ""
        }
    ));
    section.summary.push(Sum::new(
        "app, window closed: CPU per minute",
        format!("{app_cpu:.0} ms"),
        format!("headless daemon: {daemon_cpu:.0} ms"),
        ratio(app_cpu, daemon_cpu),
        "under 100 ms",
    ));
    section.summary.push(Sum::new(
        "app, window closed: resident memory",
        format!("{tree_rss:.1} MiB"),
        format!("headless daemon: {daemon_rss:.1} MiB"),
        ratio(tree_rss, daemon_rss),
        "under 60 MB",
    ));
    section.summary.push(Sum::new(
        "app, window closed: written memory (footprint)",
        format!("{tree_dirty:.1} MiB"),
        format!("headless daemon: {daemon_dirty:.1} MiB"),
        ratio(tree_dirty, daemon_dirty),
        "",
    ));
    drop(daemon);
    drop(kids);
    Ok(section)
}
