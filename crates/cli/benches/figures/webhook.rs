//! Webhook delivery (issue 35) on the real daemon, to a hyper receiver on 127.0.0.1 in the
//! bench: commit to the receiver's POST beside commit to the push frame of the same row
//! (one daemon, one stream and one subscription); a burst of 10,000 mails to one fast
//! receiver beside the same burst on a push stream; and the daemon's peak RSS while such a
//! burst waits behind a receiver that never answers, beside its RSS idle.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use crate::daemon::{Daemon, private_tmp};
use crate::report::{Section, Sum};
use crate::stats::{count, dist, env_or, ms, ratio, ratio_d};
use crate::wire::{Frame, Opened, WAIT};
use crate::writer::{Store, Writer};

/// A Standard Webhooks secret (24 bytes).
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    let rows = env_or("TIDINGS_BENCH_WEBHOOK_ROWS", 300);
    let gap = Duration::from_millis(env_or("TIDINGS_BENCH_PUSH_GAP_MS", 50));
    let burst = env_or("TIDINGS_BENCH_WEBHOOK_BURST", 10_000);
    let watch = Duration::from_secs(env_or("TIDINGS_BENCH_WEBHOOK_WATCH_SECS", 15));
    let mut section = Section::new(
        "webhook",
        "Webhook delivery: latency, throughput, memory behind a stuck receiver",
        vec!["figure", "webhook", "baseline", "ratio"],
    );
    section.notes.push(format!(
        "Latency: {rows} mails {} ms apart, each timed from its commit returning to the \
         receiver reading the POST and to the push frame of the same row (one daemon, both \
         at once). Throughput: {} mails in one commit, to the last POST and to the last \
         frame. Memory: the same burst behind a receiver that takes the challenge and then \
         never answers, RSS sampled every 50 ms for {} s, against the same daemon's RSS idle \
         with the subscription made.",
        gap.as_millis(),
        count(burst),
        watch.as_secs()
    ));

    let (post, frame) = latency(ctx, rows, gap)?;
    section.rows.push(vec![
        "commit to POST / to push frame, p50".into(),
        ms(post.p50),
        ms(frame.p50),
        ratio_d(post.p50, frame.p50),
    ]);
    section.rows.push(vec![
        "commit to POST / to push frame, p99".into(),
        ms(post.p99),
        ms(frame.p99),
        ratio_d(post.p99, frame.p99),
    ]);
    section.summary.push(Sum::new(
        "webhook: commit to POST, p50 (baseline: push frame p50)",
        ms(post.p50),
        format!("push: {}", ms(frame.p50)),
        ratio_d(post.p50, frame.p50),
        "",
    ));

    let (hook_rate, push_rate) = throughput(ctx, burst)?;
    section.rows.push(vec![
        format!(
            "burst of {}: events/s to the receiver / on a stream",
            count(burst)
        ),
        format!("{hook_rate:.0}/s"),
        format!("{push_rate:.0}/s"),
        ratio(hook_rate, push_rate),
    ]);
    section.summary.push(Sum::new(
        format!(
            "webhook: {} mails to one receiver (baseline: a stream)",
            count(burst)
        ),
        format!("{hook_rate:.0} events/s"),
        format!("push: {push_rate:.0}/s"),
        ratio(hook_rate, push_rate),
        "",
    ));

    let (idle, peak) = memory(ctx, burst, watch)?;
    section.rows.push(vec![
        format!(
            "RSS: peak with {} behind a stuck receiver / idle",
            count(burst)
        ),
        format!("{peak:.1} MiB"),
        format!("{idle:.1} MiB"),
        ratio(peak, idle),
    ]);
    section.summary.push(Sum::new(
        format!(
            "webhook: peak RSS, {} behind a stuck receiver",
            count(burst)
        ),
        format!("{peak:.1} MiB"),
        format!("idle: {idle:.1} MiB"),
        ratio(peak, idle),
        "",
    ));
    Ok(section)
}

/// Per row, commit to POST and commit to frame.
fn latency(
    ctx: &crate::Ctx,
    rows: u64,
    gap: Duration,
) -> Result<(crate::stats::Dist, crate::stats::Dist)> {
    let receiver = Receiver::start(false)?;
    let daemon = daemon_allowing(&ctx.log("webhook-latency"), &receiver)?;
    subscribe(&daemon, &receiver)?;
    let frames = stream(&daemon)?;
    let mut writer = Writer::open(&daemon.home, Store::Mail)?;
    let (mut to_post, mut to_frame) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for i in 0..rows {
        let key = format!("bench.webhook.{i}");
        let id = writer.event_id(&key);
        writer.append(&key)?;
        let committed = Instant::now();
        let deadline = committed + WAIT;
        let frame_at = wait_frame(&frames.1, &id, deadline)?;
        let post_at = receiver.wait_for(&id, deadline)?;
        to_frame.push(frame_at.saturating_duration_since(committed));
        to_post.push(post_at.saturating_duration_since(committed));
        let next = started + gap * u32::try_from(i + 1)?;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    drop(frames);
    let (Some(post), Some(frame)) = (dist(&mut to_post), dist(&mut to_frame)) else {
        bail!("no row was measured");
    };
    Ok((post, frame))
}

/// Events a second for a burst of `burst` mails in one commit: to the receiver, on a stream.
fn throughput(ctx: &crate::Ctx, burst: u64) -> Result<(f64, f64)> {
    let receiver = Receiver::start(false)?;
    let daemon = daemon_allowing(&ctx.log("webhook-throughput"), &receiver)?;
    subscribe(&daemon, &receiver)?;
    let frames = stream(&daemon)?;
    let mut writer = Writer::open(&daemon.home, Store::Mail)?;
    let keys: Vec<String> = (0..burst).map(|i| format!("bench.burst.{i}")).collect();
    let last = writer.event_id(keys.last().context("an empty burst")?);
    writer.append_mails(&keys)?;
    let committed = Instant::now();
    let deadline = committed + WAIT * 5;
    let frame_at = wait_frame(&frames.1, &last, deadline)?;
    let post_at = receiver.wait_for(&last, deadline)?;
    let events = receiver.events_seen();
    if events != usize::try_from(burst)? {
        bail!("the receiver got {events} events of {burst}");
    }
    let per_s = |at: Instant| burst as f64 / at.saturating_duration_since(committed).as_secs_f64();
    Ok((per_s(post_at), per_s(frame_at)))
}

/// The daemon's RSS idle (MiB, the most of a few samples) and its peak while a burst waits
/// behind a stuck receiver.
fn memory(ctx: &crate::Ctx, burst: u64, watch: Duration) -> Result<(f64, f64)> {
    let receiver = Receiver::start(true)?;
    let daemon = daemon_allowing(&ctx.log("webhook-memory"), &receiver)?;
    subscribe(&daemon, &receiver)?;
    std::thread::sleep(Duration::from_secs(2));
    let mut idle: f64 = 0.0;
    for _ in 0..20 {
        idle = idle.max(crate::procfs::rss_mib(daemon.pid)?);
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut writer = Writer::open(&daemon.home, Store::Mail)?;
    let keys: Vec<String> = (0..burst).map(|i| format!("bench.stuck.{i}")).collect();
    writer.append_mails(&keys)?;
    let until = Instant::now() + watch;
    let mut peak = idle;
    while Instant::now() < until {
        peak = peak.max(crate::procfs::rss_mib(daemon.pid)?);
        std::thread::sleep(Duration::from_millis(50));
    }
    if receiver.events_seen() == 0 {
        bail!("the stuck receiver was never sent the first event");
    }
    Ok((idle, peak))
}

/// A fresh demo daemon whose settings allow `receiver`'s origin.
fn daemon_allowing(log: &std::path::Path, receiver: &Receiver) -> Result<Daemon> {
    let dir = private_tmp("tidings-bench.")?;
    let home = dir.path().join("demo");
    std::fs::create_dir_all(&home)?;
    let settings = format!(
        "{}\n[webhooks]\nallow = [\"http://{}\"]\n",
        tidings_server::demo::DEMO_SETTINGS,
        receiver.addr
    );
    std::fs::write(home.join("settings.toml"), settings)?;
    let mut daemon = Daemon::spawn(&home, log, vec![dir])?;
    daemon.wait_ready()?;
    Ok(daemon)
}

/// `events/subscribe` for every mail to `receiver`.
fn subscribe(daemon: &Daemon, receiver: &Receiver) -> Result<()> {
    let mut conn = daemon.connect()?;
    let answer = conn.call(
        "sub",
        "events/subscribe",
        json!({"name": "mail.received", "arguments": {},
               "delivery": {"mode": "webhook", "url": format!("http://{}/hook", receiver.addr),
                            "secret": SECRET}}),
    )?;
    if answer.get("error").is_some() {
        bail!("events/subscribe refused: {answer}");
    }
    Ok(())
}

/// A push stream of every mail, its frames sent to the returned channel.
fn stream(daemon: &Daemon) -> Result<(crate::wire::Reading, mpsc::Receiver<Frame>)> {
    let mut conn = daemon.connect()?;
    match conn
        .open_streams(&[("push".to_owned(), "mail.received", json!({}))])?
        .pop()
    {
        Some(Opened::Active) => {}
        other => bail!("the stream was not opened: {other:?}"),
    }
    let (tx, rx) = mpsc::channel();
    Ok((conn.into_frames(tx)?, rx))
}

fn wait_frame(frames: &mpsc::Receiver<Frame>, id: &str, deadline: Instant) -> Result<Instant> {
    loop {
        let f = frames
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .with_context(|| format!("no frame for {id}"))?;
        if f.event_id == id {
            return Ok(f.at);
        }
    }
}

/// The receiver: echoes the challenge, notes when each event's POST was read, and answers
/// 204, or (stuck) never answers an event.
struct Receiver {
    addr: SocketAddr,
    seen: mpsc::Receiver<(String, Instant)>,
    got: std::cell::RefCell<Vec<(String, Instant)>>,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    fn start(stuck: bool) -> Result<Receiver> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let addr = listener.local_addr()?;
        let (tx, seen) = mpsc::channel();
        let tx = Arc::new(std::sync::Mutex::new(tx));
        runtime.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let tx = Arc::clone(&tx);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: Request<_>| {
                        let tx = Arc::clone(&tx);
                        answer(request, stuck, tx)
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Ok(Receiver {
            addr,
            seen,
            got: std::cell::RefCell::default(),
            _runtime: runtime,
        })
    }

    /// When the POST of event `id` was read.
    fn wait_for(&self, id: &str, deadline: Instant) -> Result<Instant> {
        loop {
            if let Some((_, at)) = self.got.borrow().iter().find(|(e, _)| e == id) {
                return Ok(*at);
            }
            let next = self
                .seen
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .with_context(|| format!("the receiver never got {id}"))?;
            self.got.borrow_mut().push(next);
        }
    }

    /// Events received so far.
    fn events_seen(&self) -> usize {
        self.got.borrow_mut().extend(self.seen.try_iter());
        self.got.borrow().len()
    }
}

async fn answer(
    request: Request<hyper::body::Incoming>,
    stuck: bool,
    tx: Arc<std::sync::Mutex<mpsc::Sender<(String, Instant)>>>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = request.into_body().collect().await?.to_bytes();
    let at = Instant::now();
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if value["type"] == "verification" {
        let echo = json!({"challenge": value["challenge"]}).to_string();
        return Ok(Response::new(Full::new(Bytes::from(echo))));
    }
    if let Some(id) = value["eventId"].as_str()
        && let Ok(tx) = tx.lock()
    {
        let _ = tx.send((id.to_owned(), at));
    }
    if stuck {
        std::future::pending::<()>().await;
    }
    Ok(Response::builder()
        .status(204)
        .body(Full::new(Bytes::new()))
        .expect("a plain 204"))
}
