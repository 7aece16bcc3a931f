//! Mail's categories through the pull tools: the `categories` argument narrows, a category the
//! type does not file under is refused by name, and the user's restriction sits on top.

use serde_json::json;
use tidings_core::event::Category;
use tidings_fixtures::Classification;

use super::support::{Harness, allow, both_on};

fn promotion() -> Classification {
    Classification {
        category: Some(3),
        high_impact: false,
        urgent: false,
    }
}

/// The senders of a `tidings_check` result's events.
fn senders(r: &serde_json::Value) -> Vec<String> {
    r["structuredContent"]["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events in {r}"))
        .iter()
        .map(|e| {
            e["data"]["from"]["address"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_tool_narrows_by_category() {
    let mut h = Harness::new(|s| {
        both_on(s);
        allow(s, "example.com");
    })
    .await;
    let mut c = h.connect();
    let call =
        |arguments: serde_json::Value| json!({"name": "tidings_check", "arguments": arguments});
    let args = json!({"events": ["mail.received"], "categories": ["promotions"]});
    let first = c.ok("tools/call", call(args.clone())).await;
    assert_eq!(senders(&first), Vec::<String>::new(), "from now: {first}");
    h.append_mail("friend@example.com");
    let deal = h.append_mail("deals@example.com");
    h.mail
        .as_mut()
        .unwrap()
        .classify(deal, &promotion())
        .unwrap();
    let mut next = args.clone();
    next["cursor"] = first["structuredContent"]["cursor"].clone();
    let got = c.ok("tools/call", call(next)).await;
    let from = senders(&got);
    assert_eq!(from, ["deals@example.com"], "{got}");
    assert_eq!(
        got["structuredContent"]["events"][0]["data"]["category"],
        "promotions"
    );

    // Messages files nothing under updates: refused, naming the argument.
    let bad = c
        .ok(
            "tools/call",
            call(json!({"events": ["messages.received"], "categories": ["updates"]})),
        )
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(bad.to_string().contains("categories"), "{bad}");

    // The user allows primary only: promotions asked for is refused, not widened.
    h.daemon
        .update_settings(|s| s.mail.categories = vec![Category::Primary])
        .unwrap();
    let refused = c
        .ok(
            "tools/call",
            call(json!({"events": ["mail.received"], "categories": ["promotions"]})),
        )
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
}
