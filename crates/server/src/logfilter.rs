//! The log filters `tidings` and the app share: our targets at a level, rmcp's own logs capped
//! (they carry envelopes), and one rmcp error that is not one dropped: a response with no one
//! left to take it ([`ClientGone`]).

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Metadata};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Filter};

/// Our targets at `level`; rmcp at error, and never above warn whatever the verbosity. rmcp
/// logs whole requests and results at debug and trace, and those carry envelopes (senders,
/// addresses, subjects) that must not reach a log file. It logs every JSON-RPC error it sends
/// at warn, so that level is left to `-v` and up: a refused request is the client's business.
pub fn log_filter(level: LevelFilter) -> Targets {
    let rmcp = if level >= LevelFilter::DEBUG {
        LevelFilter::WARN
    } else {
        LevelFilter::ERROR
    };
    Targets::new().with_default(level).with_target("rmcp", rmcp)
}

/// rmcp's ERRORs for a response that could not be sent because its receiver is gone. Over
/// HTTP a client ends a stream by closing its response, and rmcp then logs "failed to send
/// pending response during drain" or "fail to response message" with `channel closed`: that
/// is a cancel, not a fault. Only that exact pairing is dropped; any other rmcp error (and
/// these messages with any other cause) is still logged.
pub struct ClientGone;

/// rmcp's messages for a response that could not be sent.
const UNSENT_RESPONSE: [&str; 2] = [
    "failed to send pending response during drain",
    "fail to response message",
];

/// The error a send into a closed channel reports (tokio's `SendError`).
const CLOSED: &str = "channel closed";

impl<S> Filter<S> for ClientGone {
    fn enabled(&self, _: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        true
    }

    fn event_enabled(&self, event: &Event<'_>, _: &Context<'_, S>) -> bool {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || !meta.target().starts_with("rmcp") {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        !(UNSENT_RESPONSE.contains(&fields.message.as_str()) && fields.error == CLOSED)
    }
}

/// The `message` and `error` fields of an event, as text.
#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "error" {
            value.clone_into(&mut self.error);
        }
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing::level_filters::LevelFilter;

    use super::log_filter;

    #[test]
    fn rmcp_never_logs_above_warn_whatever_the_verbosity() {
        for level in [
            LevelFilter::ERROR,
            LevelFilter::WARN,
            LevelFilter::INFO,
            LevelFilter::DEBUG,
            LevelFilter::TRACE,
        ] {
            let filter = log_filter(level);
            for target in ["rmcp", "rmcp::service", "rmcp::transport::async_rw"] {
                assert!(
                    !filter.would_enable(target, &Level::INFO),
                    "{target} at {level}"
                );
                assert!(
                    !filter.would_enable(target, &Level::DEBUG),
                    "{target} at {level}"
                );
                assert!(
                    !filter.would_enable(target, &Level::TRACE),
                    "{target} at {level}"
                );
                assert!(
                    filter.would_enable(target, &Level::ERROR),
                    "{target} at {level}"
                );
            }
        }
        // Our own targets follow the verbosity.
        assert!(log_filter(LevelFilter::TRACE).would_enable("tidings_server::hub", &Level::TRACE));
        assert!(log_filter(LevelFilter::DEBUG).would_enable("rmcp", &Level::WARN));
        assert!(!log_filter(LevelFilter::INFO).would_enable("rmcp", &Level::WARN));
    }

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_response_nobody_takes_is_not_an_error_but_other_rmcp_errors_are() {
        use tracing_subscriber::Layer;
        use tracing_subscriber::filter::FilterExt;
        use tracing_subscriber::layer::SubscriberExt;

        let buffer = Buffer::default();
        let writer = buffer.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_filter(log_filter(LevelFilter::INFO).and(super::ClientGone));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let error = "channel closed";
            tracing::error!(target: "rmcp::service", %error, "failed to send pending response during drain");
            tracing::error!(target: "rmcp::service", %error, "fail to response message");
            let error = "Broken pipe (os error 32)";
            tracing::error!(target: "rmcp::service", %error, "fail to response message");
            let error = "channel closed";
            tracing::error!(target: "rmcp::service", %error, "response send task failed");
            tracing::error!(target: "tidings_server::hub", %error, "fail to response message");
        });
        let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 3, "{log}");
        assert!(lines[0].contains("Broken pipe"), "{log}");
        assert!(lines[1].contains("response send task failed"), "{log}");
        assert!(lines[2].contains("tidings_server::hub"), "{log}");
    }
}
