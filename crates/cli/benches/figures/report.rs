//! What a part reports: its table (kept in docs/benchmarks.md between `<!-- bench:PART -->`
//! markers) and its lines of the summary printed at the end of a run.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

/// One part's results.
pub struct Section {
    pub part: &'static str,
    pub title: &'static str,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
    pub summary: Vec<Sum>,
}

/// One line of the summary: a figure beside its baseline from the same run.
pub struct Sum {
    pub figure: String,
    pub measured: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
}

impl Sum {
    pub fn new(
        figure: impl Into<String>,
        measured: String,
        baseline: String,
        ratio: String,
        target: &str,
    ) -> Sum {
        Sum {
            figure: figure.into(),
            measured,
            baseline,
            ratio,
            target: target.to_owned(),
        }
    }
}

impl Section {
    pub fn new(part: &'static str, title: &'static str, header: Vec<&'static str>) -> Section {
        Section {
            part,
            title,
            header,
            rows: Vec::new(),
            notes: Vec::new(),
            summary: Vec::new(),
        }
    }

    /// The table and notes, in Markdown.
    pub fn markdown(&self) -> String {
        let mut out = table(&self.header, &self.rows);
        for note in &self.notes {
            let _ = write!(out, "\n{note}\n");
        }
        out
    }
}

/// A Markdown table.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        " --- |".repeat(header.len())
    );
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// The summary of a run: every part's lines.
pub fn summary(sections: &[Section]) -> String {
    let rows: Vec<Vec<String>> = sections
        .iter()
        .flat_map(|s| {
            s.summary.iter().map(|l| {
                vec![
                    s.part.to_owned(),
                    l.figure.clone(),
                    l.measured.clone(),
                    l.baseline.clone(),
                    l.ratio.clone(),
                    l.target.clone(),
                ]
            })
        })
        .collect();
    table(
        &[
            "part",
            "figure",
            "measured",
            "baseline (same run)",
            "ratio",
            "issue 14 target",
        ],
        &rows,
    )
}

/// This machine, in one line: architecture, cores, memory, CPU model, kernel.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map_or_else(
            || "unknown CPU".to_owned(),
            |v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned(),
        );
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{}, {cores} cores ({model}), {mem_gib:.0} GiB, Linux {}",
        std::env::consts::ARCH,
        kernel.trim()
    )
}

/// Now, UTC, to the minute.
pub fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    now.format(format).unwrap_or_default()
}

/// Replaces each section's block in docs/benchmarks.md (between `<!-- bench:PART -->` and
/// `<!-- /bench:PART -->`), appending the ones not there yet; and the summary block when
/// `summary` is given. Written to a temporary file and renamed over the old one.
pub fn update_docs(
    path: &Path,
    sections: &[Section],
    summary: Option<&str>,
    stamp: &str,
) -> Result<()> {
    let mut text =
        std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let mut blocks: Vec<(&str, &str, String)> = sections
        .iter()
        .map(|s| (s.part, s.title, format!("{stamp}\n\n{}", s.markdown())))
        .collect();
    if let Some(summary) = summary {
        blocks.push((
            "summary",
            "Summary of the last full run",
            format!("{stamp}\n\n{summary}"),
        ));
    }
    for (part, title, body) in blocks {
        let open = format!("<!-- bench:{part} -->");
        let close = format!("<!-- /bench:{part} -->");
        let block = format!("{open}\n{body}{close}");
        match (text.find(&open), text.find(&close)) {
            (Some(a), Some(b)) if b > a => text.replace_range(a..b + close.len(), &block),
            _ => {
                let _ = write!(text, "\n### {title}\n\n{block}\n");
            }
        }
    }
    let tmp = path.with_extension("md.bench-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replace {}", path.display()))?;
    Ok(())
}
