//! SQL pieces shared by both stores: sender patterns as predicates, and `IN (…)` lists.

use rusqlite::Connection;
use rusqlite::types::Value;

use crate::filter::SenderPattern;

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

/// `(column matches any of patterns)`, pushing the bound values onto `params`. LIKE is
/// case-insensitive for ASCII, and `=` compares with NOCASE, so matching ignores case as the
/// stores' own `COLLATE NOCASE` columns do.
pub(crate) fn sender_predicate(
    column: &str,
    patterns: &[SenderPattern],
    params: &mut Vec<Value>,
) -> String {
    let mut parts = Vec::with_capacity(patterns.len());
    for p in patterns {
        match p {
            SenderPattern::Exact(s) => {
                params.push(Value::Text(s.clone()));
                parts.push(format!("{column} = ? COLLATE NOCASE"));
            }
            SenderPattern::Domain(d) => {
                params.push(Value::Text(format!("%@{}", like_escape(d))));
                params.push(Value::Text(format!("%.{}", like_escape(d))));
                parts.push(format!(
                    "{column} LIKE ? ESCAPE '\\' OR {column} LIKE ? ESCAPE '\\'"
                ));
            }
            SenderPattern::Prefix(p) => {
                params.push(Value::Text(format!("{}%", like_escape(p))));
                parts.push(format!("{column} LIKE ? ESCAPE '\\'"));
            }
        }
    }
    if parts.is_empty() {
        "0".to_owned()
    } else {
        format!("({})", parts.join(" OR "))
    }
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

    #[test]
    fn like_wildcards_in_input_are_escaped() {
        let mut params = Vec::new();
        let sql = sender_predicate(
            "a",
            &[SenderPattern::Domain("ex_ample.com".into())],
            &mut params,
        );
        assert_eq!(sql, "(a LIKE ? ESCAPE '\\' OR a LIKE ? ESCAPE '\\')");
        assert_eq!(params[0], Value::Text("%@ex\\_ample.com".into()));
    }

    #[test]
    fn sql_matching_agrees_with_the_rust_matcher() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let patterns = [
            SenderPattern::Exact("ana@example.com".into()),
            SenderPattern::Domain("example.org".into()),
            SenderPattern::Prefix("+120255501".into()),
        ];
        for sender in [
            "ANA@example.com",
            "b@eu.example.org",
            "c@notexample.org",
            "+12025550143",
            "+12025550200",
            "x_y@example.com",
        ] {
            let mut params = Vec::new();
            let mut all = Vec::new();
            let pred = sender_predicate("s.v", &patterns, &mut params);
            // Placeholders number in text order: the pattern values, then the sender.
            all.extend(params);
            all.push(Value::Text(sender.to_owned()));
            let q = format!("SELECT {pred} FROM (SELECT ? AS v) s");
            let got: bool = conn
                .query_row(&q, rusqlite::params_from_iter(all), |r| r.get(0))
                .unwrap();
            let want = patterns.iter().any(|p| p.matches(sender));
            assert_eq!(got, want, "{sender}");
        }
    }
}
