//! SQL pieces shared by both stores: sender patterns as predicates. Long lists are one bound
//! JSON parameter read with `json_each`, so they never deepen the expression tree (`SQLite` caps
//! expression depth at 1,000, which a few hundred inline domains would exceed).

use rusqlite::Connection;
use rusqlite::types::Value;

use super::Window;
use crate::filter::{SenderPattern, is_phone_handle};

/// The column names of `table`; empty when the table does not exist.
pub(crate) fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(names)
}

/// Escape `%`, `_` and `\` for a `LIKE … ESCAPE '\'` pattern.
fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `strings` as one JSON array, bound as a single text parameter for `json_each`.
pub(crate) fn json_list<S: AsRef<str>>(strings: &[S], params: &mut Vec<Value>) {
    let list: Vec<&str> = strings.iter().map(AsRef::as_ref).collect();
    params.push(Value::Text(
        serde_json::to_string(&list).expect("a list of strings serialises"),
    ));
}

/// SQL that is true when the text `column` is a phone handle: digits with an optional leading
/// `+`, as [`is_phone_handle`] says.
fn phone_shape(column: &str) -> String {
    format!(
        "(({column} GLOB '[0-9]*' OR {column} GLOB '+[0-9]*') AND substr({column}, 2) NOT GLOB '*[^0-9]*')"
    )
}

/// Lists of domains or prefixes up to this long are written inline as `LIKE` terms, the
/// fastest plan for the usual one or two; longer ones go through `json_each`, whose cost
/// grows with the number of distinct lengths in the list, not its entries.
const INLINE_MAX: usize = 16;

/// How a sender condition finds its rows of `table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Membership {
    /// `rowid IN (SELECT t.ROWID …)`: the matching handles are listed once per statement run
    /// (every handle tested against every pattern), and the planner may drive the scan from
    /// them through a sender index. For the condition that picks the rows.
    List,
    /// `EXISTS (SELECT 1 … WHERE t.ROWID = rowid AND …)`: only the handle of each row the
    /// other conditions let through is tested. For a second sender condition (the allowlist
    /// under a filter's senders): listing it would test all of a store's handles on every
    /// poll, however few rows the other conditions let through. And for every sender
    /// condition of a short window ([`memberships`]).
    Row,
}

/// Windows of at most this many ROWIDs test every sender condition per row. Listing a
/// condition's handles tests every handle of the store, and the planner then seeks the sender
/// index once per listed handle, which costs milliseconds under an allowlist that lists most
/// of a store's handles (docs/benchmarks.md, "History"). Per row, a window this short costs
/// far less, however many handles the store holds. A wider window's first few ROWIDs are
/// read per row too, and say how to read the rest (`read::fill_by_senders`).
pub(crate) const PER_ROW_WINDOW: i64 = 256;

/// Whether `window` is short enough to test its senders per row, whatever they match.
pub(crate) fn is_short(window: Window) -> bool {
    window.upto.saturating_sub(window.after) <= PER_ROW_WINDOW
}

/// How the filter's senders, then the allowlist, find their rows: both per row when the scan
/// tests them `per_row` (a short window, or a wide one whose senders match densely, see
/// `read::fill_by_senders`); else the filter's senders are listed (so a sender index can
/// drive the scan) and the allowlist is listed when it is the only sender condition, tested
/// per row after a filter's senders.
pub(crate) fn memberships(senders: &[SenderPattern], per_row: bool) -> [Membership; 2] {
    if per_row {
        [Membership::Row, Membership::Row]
    } else if senders.is_empty() {
        [Membership::List, Membership::List]
    } else {
        [Membership::List, Membership::Row]
    }
}

/// `(rowid matches any of patterns)`: a condition on `rowid` (e.g. `m.sender`), true when that
/// row of `table` has a `column` matched by one of `patterns`, found as `membership` says.
/// Each kind of pattern is one part:
/// - exact handles: an `IN` lookup in one bound JSON list, compared with NOCASE;
/// - domains, against e-mail handles only: `…@d` or `…@….d`;
/// - prefixes: phone prefixes against phone handles only, the others against e-mail handles
///   only.
///
/// Long lists of domains or prefixes compare each handle's suffix (prefix) of every length
/// the list has with the list. LIKE, NOCASE and `lower()` fold ASCII case only, and so does
/// [`SenderPattern::matches`].
pub(crate) fn sender_condition(
    rowid: &str,
    table: &str,
    column: &str,
    patterns: &[SenderPattern],
    membership: Membership,
    params: &mut Vec<Value>,
) -> String {
    let parts: Vec<String> = sender_parts(column, patterns, params)
        .into_iter()
        .map(|(from, cond)| match membership {
            Membership::List => {
                format!("{rowid} IN (SELECT t.ROWID FROM {table} t{from} WHERE {cond})")
            }
            Membership::Row => {
                format!("EXISTS (SELECT 1 FROM {table} t{from} WHERE t.ROWID = {rowid} AND {cond})")
            }
        })
        .collect();
    if parts.is_empty() {
        "0".to_owned()
    } else {
        format!("({})", parts.join(" OR "))
    }
}

/// The parts of [`sender_condition`], each as what joins the handle table `t` (a leading
/// `, …` or nothing) and its test on `t.column`.
fn sender_parts(
    column: &str,
    patterns: &[SenderPattern],
    params: &mut Vec<Value>,
) -> Vec<(String, String)> {
    let mut exact = Vec::new();
    let mut domains = Vec::new();
    let mut phone_prefixes = Vec::new();
    let mut email_prefixes = Vec::new();
    for p in patterns {
        match p {
            SenderPattern::Exact(s) => exact.push(s.as_str()),
            SenderPattern::Domain(d) => domains.push(d.as_str()),
            SenderPattern::Prefix(p) if is_phone_handle(p) => phone_prefixes.push(p.as_str()),
            SenderPattern::Prefix(p) => email_prefixes.push(p.as_str()),
            // Matches no handle: no part, so a list of only `Nobody` is `0`.
            SenderPattern::Nobody => {}
        }
    }
    // Qualified, so a column called like one of json_each's (`id`, `value`, …) stays ours.
    let c = format!("t.{column}");
    let c = c.as_str();
    let is_email = format!("instr({c}, '@') > 0");
    // Lengths of a bound list, joined as `k.n`.
    let lengths = ", (SELECT DISTINCT length(value) AS n FROM json_each(?)) k".to_owned();
    let mut parts = Vec::new();
    if !exact.is_empty() {
        json_list(&exact, params);
        parts.push((
            String::new(),
            format!("{c} COLLATE NOCASE IN (SELECT value FROM json_each(?))"),
        ));
    }
    if domains.len() > INLINE_MAX {
        json_list(&domains, params);
        json_list(&domains, params);
        // `sep` is the character before the suffix: `@`, or a `.` with an `@` before it.
        let sep = format!("substr({c}, -k.n - 1, 1)");
        parts.push((
            lengths.clone(),
            format!(
                "length({c}) > k.n AND lower(substr({c}, -k.n)) IN (SELECT value FROM json_each(?)) \
                 AND ({sep} = '@' OR ({sep} = '.' AND instr(substr({c}, 1, length({c}) - k.n - 1), '@') > 0))"
            ),
        ));
    } else if !domains.is_empty() {
        let mut terms = Vec::new();
        for d in &domains {
            // `%d` first: one cheap test rejects most handles, where the two exact shapes
            // cost a handle twice as much (a leading `%` tries every position).
            params.push(Value::Text(format!("%{}", like_escape(d))));
            params.push(Value::Text(format!("%@{}", like_escape(d))));
            params.push(Value::Text(format!("%@%.{}", like_escape(d))));
            terms.push(format!(
                "{c} LIKE ? ESCAPE '\\' AND ({c} LIKE ? ESCAPE '\\' OR {c} LIKE ? ESCAPE '\\')"
            ));
        }
        parts.push((String::new(), format!("({})", terms.join(" OR "))));
    }
    for (list, shape) in [
        (&phone_prefixes, phone_shape(c)),
        (&email_prefixes, is_email.clone()),
    ] {
        if list.len() > INLINE_MAX {
            json_list(list, params);
            json_list(list, params);
            parts.push((
                lengths.clone(),
                format!(
                    "{shape} AND lower(substr({c}, 1, k.n)) IN (SELECT value FROM json_each(?))"
                ),
            ));
        } else if !list.is_empty() {
            let mut terms = Vec::new();
            for p in list {
                params.push(Value::Text(format!("{}%", like_escape(p))));
                terms.push(format!("{c} LIKE ? ESCAPE '\\'"));
            }
            parts.push((
                String::new(),
                format!("{shape} AND ({})", terms.join(" OR ")),
            ));
        }
    }
    parts
}

/// `?, ?, …` for `values`, pushed onto `params`; `NULL` for an empty list (matches nothing).
pub(crate) fn in_list(values: &[i64], params: &mut Vec<Value>) -> String {
    if values.is_empty() {
        return "NULL".to_owned();
    }
    params.extend(values.iter().map(|v| Value::Integer(*v)));
    vec!["?"; values.len()].join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The senders every matching test runs over: ordinary handles, lookalikes and the
    /// e-mail handles that dress up as phone numbers.
    const SENDERS: &[&str] = &[
        "ANA@example.com",
        "b@eu.example.org",
        "c@notexample.org",
        "x.example.org",
        "example.org@evil.test",
        "d@example.org.evil.test",
        "+12025550143",
        "+12025550200",
        "12025550199",
        "+12025550143@evil.test",
        "+120255501@example.org",
        "x_y@example.com",
        "xzy@example.com",
        "noreply@shop.test",
        "NoReply-2@shop.test",
        "noreply.shop.test",
        "a@b@example.org",
        "+1202555014x",
        "",
    ];

    fn patterns() -> Vec<SenderPattern> {
        vec![
            SenderPattern::Exact("ana@example.com".into()),
            SenderPattern::Exact("+12025550143".into()),
            SenderPattern::Domain("example.org".into()),
            SenderPattern::Prefix("+120255501".into()),
            SenderPattern::Prefix("120255501".into()),
            SenderPattern::Prefix("noreply".into()),
            SenderPattern::Prefix("x_".into()),
        ]
    }

    /// The senders `patterns` let through, by SQL over a table whose column has `collation`,
    /// the same listed and tested per row.
    fn sql_matches(collation: &str, patterns: &[SenderPattern]) -> Vec<String> {
        let listed = sql_matches_by(collation, patterns, Membership::List);
        let per_row = sql_matches_by(collation, patterns, Membership::Row);
        assert_eq!(
            listed, per_row,
            "listed and per-row disagree on {patterns:?}"
        );
        listed
    }

    fn sql_matches_by(
        collation: &str,
        patterns: &[SenderPattern],
        membership: Membership,
    ) -> Vec<String> {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE h (ROWID INTEGER PRIMARY KEY, id TEXT {collation}); \
             CREATE INDEX h_id ON h(id);"
        ))
        .unwrap();
        for s in SENDERS {
            conn.execute("INSERT INTO h (id) VALUES (?1)", [s]).unwrap();
        }
        let mut params = Vec::new();
        // `id`, as in chat.db's `handle`: also the name of one of json_each's columns.
        let cond = sender_condition("o.ROWID", "h", "id", patterns, membership, &mut params);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT o.id FROM h o WHERE {cond} ORDER BY o.ROWID"
            ))
            .unwrap();
        stmt.query_map(rusqlite::params_from_iter(params), |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn rust_matches(patterns: &[SenderPattern]) -> Vec<String> {
        SENDERS
            .iter()
            .filter(|s| patterns.iter().any(|p| p.matches(s)))
            .map(std::string::ToString::to_string)
            .collect()
    }

    /// `set` with enough non-matching patterns of every kind to take the `json_each` path.
    fn padded(set: &[SenderPattern]) -> Vec<SenderPattern> {
        let mut out = set.to_vec();
        for i in 0..=INLINE_MAX {
            out.push(SenderPattern::Domain(format!("pad{i}.example.net")));
            out.push(SenderPattern::Prefix(format!("+99{i}")));
            out.push(SenderPattern::Prefix(format!("pad{i}-")));
        }
        out
    }

    #[test]
    fn sql_matching_agrees_with_the_rust_matcher() {
        let all = patterns();
        let mut sets: Vec<Vec<SenderPattern>> = all.iter().map(|p| vec![p.clone()]).collect();
        sets.push(all);
        let long: Vec<_> = sets.iter().map(|s| padded(s)).collect();
        sets.extend(long);
        for collation in ["COLLATE NOCASE", ""] {
            for set in &sets {
                assert_eq!(
                    sql_matches(collation, set),
                    rust_matches(set),
                    "{set:?} {collation}"
                );
            }
        }
    }

    #[test]
    fn phone_patterns_match_phone_handles_only_and_email_patterns_email_handles_only() {
        let range = [SenderPattern::Prefix("+120255501".into())];
        assert_eq!(sql_matches("", &range), ["+12025550143"]);
        let short = [SenderPattern::Prefix("120255501".into())];
        assert_eq!(sql_matches("", &short), ["12025550199"]);
        let domain = [SenderPattern::Domain("example.org".into())];
        assert_eq!(
            sql_matches("COLLATE NOCASE", &domain),
            [
                "b@eu.example.org",
                "+120255501@example.org",
                "a@b@example.org"
            ]
        );
        let prefix = [SenderPattern::Prefix("noreply".into())];
        assert_eq!(
            sql_matches("", &prefix),
            ["noreply@shop.test", "NoReply-2@shop.test"]
        );
    }

    #[test]
    fn like_wildcards_in_prefixes_are_escaped() {
        let prefix = [SenderPattern::Prefix("x_".into())];
        assert_eq!(sql_matches("", &prefix), ["x_y@example.com"]);
        let mut params = Vec::new();
        sender_condition("r", "t", "v", &prefix, Membership::List, &mut params);
        assert_eq!(params, [Value::Text(r"x\_%".into())]);
        assert_eq!(sql_matches("", &padded(&prefix)), ["x_y@example.com"]);
    }

    #[test]
    fn ten_thousand_patterns_are_a_few_parameters() {
        let mut many: Vec<SenderPattern> = (0..10_000)
            .map(|i| SenderPattern::Domain(format!("d{i}.example.net")))
            .collect();
        many.extend((0..10_000).map(|i| SenderPattern::Exact(format!("u{i}@example.net"))));
        many.extend((0..10_000).map(|i| SenderPattern::Prefix(format!("+1{i:05}"))));
        many.push(SenderPattern::Domain("example.org".into()));
        let mut params = Vec::new();
        sender_condition("r", "t", "v", &many, Membership::List, &mut params);
        assert_eq!(
            params.len(),
            5,
            "one list for exact entries, two each for the others"
        );
        assert_eq!(sql_matches("COLLATE NOCASE", &many), rust_matches(&many));
    }
}
