//! Percentiles, ratios and the way figures are printed.

use std::time::Duration;

/// p50, p99 and max of a set of durations.
#[derive(Clone, Copy, Debug)]
pub struct Dist {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// The distribution of `v` (sorted in place); `None` when it is empty.
pub fn dist(v: &mut [Duration]) -> Option<Dist> {
    if v.is_empty() {
        return None;
    }
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    Some(Dist {
        p50: at(0.5),
        p99: at(0.99),
        max: v[v.len() - 1],
    })
}

/// Milliseconds, with the precision the size calls for.
pub fn ms(d: Duration) -> String {
    ms_f(d.as_secs_f64() * 1000.0)
}

/// A figure already in milliseconds.
pub fn ms_f(v: f64) -> String {
    if v < 1.0 {
        format!("{v:.3} ms")
    } else if v < 100.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.0} ms")
    }
}

/// `a / b` as `N×`, or `-` when there is no baseline.
pub fn ratio(a: f64, b: f64) -> String {
    if b <= 0.0 || !a.is_finite() || !b.is_finite() {
        return "-".to_owned();
    }
    let r = a / b;
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 0.01 {
        format!("{r:.2}×")
    } else {
        format!("{r:.4}×")
    }
}

/// The ratio of two durations.
pub fn ratio_d(a: Duration, b: Duration) -> String {
    ratio(a.as_secs_f64(), b.as_secs_f64())
}

/// A count with thousands separators, as the docs write them.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A positive integer from the environment, or `default`.
pub fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}
