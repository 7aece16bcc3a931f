//! `make bench`: every figure of issue 14 on the real daemon (`tidings serve`, release
//! build) over its Unix socket, each beside a baseline measured in the same run, as a ratio.
//!
//! `cargo bench -p tidings-cli --bench figures [-- PART...]`, or `make bench [PART=...]`.
//! Parts: push, fanout, sustained, catchup, maxage, idle, startup, app, webhook (default:
//! all). Each
//! prints its table as it finishes, the run ends with a summary, and the tables replace their
//! blocks in docs/benchmarks.md (`TIDINGS_BENCH_DOCS=0` leaves the file alone). Daemon logs
//! and the summary go to `target/bench/`. A part that fails says why and the others still run;
//! nothing here asserts a target. docs/benchmarks.md describes the method and every knob.
//!
//! Modules: `wire` (the socket client), `daemon` (spawning `tidings serve`), `writer` (the
//! outside writer), `store` (empty and cached 1M-row homes), `procfs` (CPU, memory, threads),
//! `stats`, `report` (tables, summary, docs); one module per part: `push`, `fanout`,
//! `sustained`, `catchup` (and `maxAgeMs`), `idle` (and start-up), `app`, `webhook`.

// Statistics over timings and counts: float conversions of small integers are exact enough.
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::too_many_lines
)]

mod app;
mod catchup;
mod daemon;
mod fanout;
mod idle;
mod procfs;
mod push;
mod report;
mod stats;
mod store;
mod sustained;
mod webhook;
mod wire;
mod writer;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;

/// Every part, in the order a full run takes them.
const PARTS: [&str; 9] = [
    "push",
    "fanout",
    "sustained",
    "catchup",
    "maxage",
    "idle",
    "startup",
    "app",
    "webhook",
];

/// What every part shares: where its logs go.
pub struct Ctx {
    logs: PathBuf,
}

impl Ctx {
    /// The log file for one daemon or tool of a part.
    pub fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.log"))
    }
}

fn main() {
    // cargo passes `--bench`; anything else not starting with `-` names a part.
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .flat_map(|a| a.split(',').map(str::to_owned).collect::<Vec<_>>())
        .filter(|a| !a.is_empty() && a != "all")
        .collect();
    if let Some(bad) = named.iter().find(|p| !PARTS.contains(&p.as_str())) {
        eprintln!("unknown part `{bad}`; the parts are: {}", PARTS.join(", "));
        std::process::exit(2);
    }
    let parts: Vec<&str> = PARTS
        .into_iter()
        .filter(|p| named.is_empty() || named.iter().any(|n| n == p))
        .collect();
    let full = parts.len() == PARTS.len();
    let bench = store::bench_dir();
    let ctx = Ctx {
        logs: bench.join("logs"),
    };
    if let Err(e) = std::fs::create_dir_all(&ctx.logs) {
        eprintln!("cannot create {}: {e}", ctx.logs.display());
        std::process::exit(1);
    }
    let stamp = format!(
        "Measured {} on {}, {} build.",
        report::now(),
        report::machine(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!("{stamp}");
    let mut sections = Vec::new();
    let mut failed = Vec::new();
    for part in parts {
        println!("\n== {part}");
        let started = Instant::now();
        if part == "app"
            && let Some(why) = app::missing()
        {
            println!("{why}");
            continue;
        }
        match run(part, &ctx) {
            Ok(section) => {
                println!("{}", section.markdown());
                println!("({part}: {:.0} s)", started.elapsed().as_secs_f64());
                sections.push(section);
            }
            Err(e) => {
                println!("{part}: FAILED: {e:#} (logs in {})", ctx.logs.display());
                failed.push(part);
            }
        }
    }
    let summary = report::summary(&sections);
    println!("\n== summary\n{stamp}\n\n{summary}");
    let file = bench.join("summary.md");
    if let Err(e) = std::fs::write(&file, format!("{stamp}\n\n{summary}")) {
        eprintln!("cannot write {}: {e}", file.display());
    }
    if std::env::var("TIDINGS_BENCH_DOCS").as_deref() != Ok("0") && !sections.is_empty() {
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/benchmarks.md");
        let summary = (full && failed.is_empty()).then_some(summary.as_str());
        match report::update_docs(&docs, &sections, summary, &stamp) {
            Ok(()) => println!("tables written to docs/benchmarks.md"),
            Err(e) => eprintln!("docs/benchmarks.md not updated: {e:#}"),
        }
    }
    if !failed.is_empty() {
        println!("failed parts: {}", failed.join(", "));
        std::process::exit(1);
    }
}

fn run(part: &str, ctx: &Ctx) -> Result<report::Section> {
    match part {
        "push" => push::run(ctx),
        "fanout" => fanout::run(ctx),
        "sustained" => sustained::run(ctx),
        "catchup" => catchup::catchup(ctx),
        "maxage" => catchup::maxage(ctx),
        "idle" => idle::idle(ctx),
        "startup" => idle::startup(ctx),
        "app" => app::run(ctx),
        "webhook" => webhook::run(ctx),
        other => unreachable!("part {other} was checked"),
    }
}
