//! What a delivery attempt came to: delivered, retry later, or skip this event.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::reply::Reply;

/// Why an attempt failed, in the words `lastError` and `data.reason` use on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Category {
    #[serde(rename = "connection_refused")]
    ConnectionRefused,
    #[serde(rename = "timeout")]
    Timeout,
    #[serde(rename = "tls_error")]
    TlsError,
    #[serde(rename = "http_4xx")]
    Http4xx,
    #[serde(rename = "http_5xx")]
    Http5xx,
    #[serde(rename = "challenge_failed")]
    ChallengeFailed,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::ConnectionRefused => "connection_refused",
            Category::Timeout => "timeout",
            Category::TlsError => "tls_error",
            Category::Http4xx => "http_4xx",
            Category::Http5xx => "http_5xx",
            Category::ChallengeFailed => "challenge_failed",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed attempt. `detail` is in our own words: never the receiver's body, headers or
/// status line, which could carry anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{category}: {detail}")]
pub struct Failure {
    pub category: Category,
    pub detail: String,
}

impl Failure {
    pub fn new(category: Category, detail: impl Into<String>) -> Failure {
        Failure {
            category,
            detail: detail.into(),
        }
    }
}

/// What to do after an answered attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Delivered,
    /// Try this event again later.
    Retry(Failure),
    /// 410 or 413: this event will never be taken; move past it, keep the subscription.
    Skip(Failure),
}

/// Judges a reply by its status alone. Redirects are failures (`http_4xx`): following one
/// would send the event somewhere the user did not approve.
pub fn classify(reply: &Reply) -> Verdict {
    let status = reply.status;
    match status {
        200..=299 => Verdict::Delivered,
        410 => Verdict::Skip(Failure::new(
            Category::Http4xx,
            "the receiver answered HTTP 410 (gone): this event is skipped",
        )),
        413 => Verdict::Skip(Failure::new(
            Category::Http4xx,
            "the receiver answered HTTP 413 (too large): this event is skipped",
        )),
        300..=399 => Verdict::Retry(Failure::new(
            Category::Http4xx,
            format!("redirects are not followed (HTTP {status})"),
        )),
        400..=499 => Verdict::Retry(Failure::new(
            Category::Http4xx,
            format!("the receiver answered HTTP {status}"),
        )),
        500..=599 => Verdict::Retry(Failure::new(
            Category::Http5xx,
            format!("the receiver answered HTTP {status}"),
        )),
        _ => Verdict::Retry(Failure::new(
            Category::Http5xx,
            format!("the receiver answered HTTP {status}, not a final status"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(status: u16) -> Verdict {
        classify(&Reply {
            status,
            body: b"secret internals".to_vec(),
            retry_after: None,
        })
    }

    #[test]
    fn two_hundreds_are_delivered() {
        for status in [200, 201, 202, 204, 299] {
            assert_eq!(verdict(status), Verdict::Delivered, "{status}");
        }
    }

    #[test]
    fn gone_and_too_large_skip_the_event() {
        for status in [410, 413] {
            let Verdict::Skip(failure) = verdict(status) else {
                panic!("{status}")
            };
            assert_eq!(failure.category, Category::Http4xx);
            assert!(
                failure.detail.contains(&status.to_string()),
                "{}",
                failure.detail
            );
        }
    }

    #[test]
    fn redirects_and_errors_are_retried() {
        let cases = [
            (301, Category::Http4xx),
            (302, Category::Http4xx),
            (308, Category::Http4xx),
            (400, Category::Http4xx),
            (404, Category::Http4xx),
            (429, Category::Http4xx),
            (500, Category::Http5xx),
            (503, Category::Http5xx),
            (101, Category::Http5xx),
        ];
        for (status, category) in cases {
            let Verdict::Retry(failure) = verdict(status) else {
                panic!("{status}")
            };
            assert_eq!(failure.category, category, "{status}");
            assert!(!failure.detail.contains("internals"), "{}", failure.detail);
        }
        let Verdict::Retry(redirect) = verdict(302) else {
            panic!()
        };
        assert_eq!(redirect.detail, "redirects are not followed (HTTP 302)");
    }

    #[test]
    fn categories_have_the_wire_names() {
        let all = [
            (Category::ConnectionRefused, "connection_refused"),
            (Category::Timeout, "timeout"),
            (Category::TlsError, "tls_error"),
            (Category::Http4xx, "http_4xx"),
            (Category::Http5xx, "http_5xx"),
            (Category::ChallengeFailed, "challenge_failed"),
        ];
        for (category, name) in all {
            assert_eq!(category.as_str(), name);
            assert_eq!(category.to_string(), name);
            let json = serde_json::to_string(&category).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<Category>(&json).unwrap(), category);
        }
    }
}
