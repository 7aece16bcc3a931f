//! What `/proc` says about a process: CPU time, resident memory, threads, children.

use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, Result};

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux unless it says otherwise).
fn hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// User + system CPU time of `pid` so far, in ms (clock-tick resolution, 10 ms here).
pub fn cpu_ms(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("read /proc/{pid}/stat (did the process exit?)"))?;
    // After the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').context("stat format")? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>()? + f[12].parse::<u64>()?;
    Ok(ticks as f64 * 1000.0 / hz())
}

/// A `kB` or plain number field of `/proc/<pid>/status`.
fn status_field(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim_start_matches(':').split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// Resident memory of `pid` in MiB.
pub fn rss_mib(pid: u32) -> Result<f64> {
    Ok(status_field(pid, "VmRSS")? as f64 / 1024.0)
}

/// The pages `pid` has written and no other process shares (`Private_Dirty` of
/// `smaps_rollup`: heap, stacks, written data), in MiB: close to the memory footprint macOS
/// reports, without the clean code pages of the libraries RSS also counts.
pub fn dirty_mib(pid: u32) -> Result<f64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .with_context(|| format!("read /proc/{pid}/smaps_rollup"))?;
    let kb: u64 = rollup
        .lines()
        .filter(|l| l.starts_with("Private_Dirty:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    Ok(kb as f64 / 1024.0)
}

/// Threads of `pid`.
pub fn threads(pid: u32) -> Result<u64> {
    status_field(pid, "Threads")
}

/// `pid` and every process below it.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) {
            for task in tasks.flatten() {
                let children =
                    std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
                out.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
        i += 1;
    }
    out
}
