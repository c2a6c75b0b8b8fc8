//! One HTTP/2 load-generator thread: its connections, `--streams` concurrent
//! streams on each, on a tokio current-thread runtime of its own.
//!
//! HTTP/2 framing, HPACK and flow control come from the `h2` crate, which
//! needs tokio; a runtime per thread keeps the HTTP/1.1 model (connections
//! owned by one thread, no work stealing, nothing shared until the end) and
//! reuses the same `Recorder`. Every stream slot is a loop: take a request
//! (at once in closed loop, from the schedule in open loop), send it, wait
//! for the response, drain its body. In open loop a dispatcher keeps the
//! schedule with the same `Pacer` and `timerfd` as HTTP/1.1 (tokio's own
//! timer has millisecond resolution) and queues due requests for the first
//! free stream, so latency still runs from the intended send time.
//!
//! A GOAWAY from the server ends the connection gracefully: streams in flight
//! finish, it is counted, and the connection is reopened. A stream reset by
//! the server (RST_STREAM) is counted and costs only that request.

use crate::config::LoadConfig;
use crate::error::LoadError;
use crate::h2_conn::{Connector, OpenError};
use crate::pacer::{Pacer, Timer};
use crate::recorder::{ErrorKind, Recorder};
use crate::share::{Output, Share};
use bytes::Bytes;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

/// What every thread of an HTTP/2 run shares: how to connect and what to send.
#[derive(Clone)]
pub struct Shared {
    connector: Connector,
    request: http::request::Parts,
    body: Bytes,
    /// With a mix: each target's request (its URI set per request) and body.
    templates: Vec<(http::request::Parts, Bytes)>,
    mix: Option<std::sync::Arc<crate::mix::Mix>>,
    /// `scheme://authority`, before a mix's expanded path.
    base: String,
}

/// A request's head for HTTP/2: no Host (it is :authority) and no
/// connection-specific headers.
fn parts(method: &str, uri: &str, headers: &[(String, String)]) -> Result<http::request::Parts, LoadError> {
    let mut builder = http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if matches!(lower.as_str(), "host" | "connection" | "keep-alive" | "transfer-encoding" | "upgrade") {
            continue;
        }
        builder = builder.header(name.as_str(), value.as_str());
    }
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("user-agent")) {
        builder = builder.header("user-agent", concat!("stampede/", env!("CARGO_PKG_VERSION")));
    }
    let request = builder.body(()).map_err(|e| LoadError::Config(format!("cannot build the HTTP/2 request: {e}")))?;
    Ok(request.into_parts().0)
}

impl Shared {
    pub fn new(cfg: &LoadConfig, tls: Option<crate::tls::TlsShared>) -> Result<Shared, LoadError> {
        let t = &cfg.target;
        let base = format!("{}://{}", if t.tls { "https" } else { "http" }, t.host_header);
        let request = parts(&cfg.method, &format!("{base}{}", t.path), &cfg.headers)?;
        let templates = match &cfg.mix {
            Some(mix) => mix
                .templates
                .iter()
                .map(|m| {
                    Ok((parts(&m.spec.method, &format!("{base}/"), &m.spec.headers)?, Bytes::from(m.spec.body.clone())))
                })
                .collect::<Result<_, LoadError>>()?,
            None => Vec::new(),
        };
        let tls = tls.map(|s| (s.config, s.name));
        Ok(Shared {
            connector: Connector::new(t.addr, tls),
            request,
            body: Bytes::from(cfg.body.clone()),
            templates,
            mix: cfg.mix.clone(),
            base,
        })
    }

    /// The request to send: the run's one request, or expansion `k` of
    /// target `t` of the mix.
    fn request(&self, pick: Option<(usize, u64)>) -> (http::Request<()>, Bytes) {
        let (head, body) = match pick {
            Some((t, _)) => (&self.templates[t].0, &self.templates[t].1),
            None => (&self.request, &self.body),
        };
        let mut r = http::Request::new(());
        *r.method_mut() = head.method.clone();
        *r.uri_mut() = match (pick, &self.mix) {
            (Some((t, k)), Some(mix)) => {
                let uri = format!("{}{}", self.base, mix.templates[t].path_of(k));
                http::Uri::try_from(uri).unwrap_or_else(|_| head.uri.clone())
            }
            _ => head.uri.clone(),
        };
        *r.headers_mut() = head.headers.clone();
        (r, body.clone())
    }
}

/// Before a cleartext `--http2` run: an HTTP/2 handshake and a PING, so
/// that a server which does not speak HTTP/2 is named in one line instead of
/// a run of failed connections. A PING, not a request: it proves the
/// protocol without giving the server work, and a server that is merely
/// slow to answer requests still passes.
pub fn preflight(shared: &Shared, url: &str, timeout: Duration) -> Result<(), LoadError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let refused = |why: String| {
        LoadError::Config(format!(
            "--http2: {url} does not speak HTTP/2 with prior knowledge ({why}); drop --http2 to load it over HTTP/1.1"
        ))
    };
    tokio::task::LocalSet::new().block_on(&rt, async {
        let exchange = async {
            let (_send, mut conn, _) = shared.connector.open(Rc::new(Cell::new(0))).await.map_err(|e| match e {
                OpenError::Connect => "connect failed".to_string(),
                OpenError::Tls | OpenError::Protocol => "no HTTP/2 handshake".to_string(),
            })?;
            let mut ping = conn.ping_pong().ok_or("no PING handle")?;
            let driver = tokio::task::spawn_local(conn);
            let pong = ping.ping(h2::Ping::opaque()).await.map(|_| ()).map_err(|e| e.to_string());
            driver.abort();
            pong
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(refused(why)),
            Err(_) => Err(refused(format!("no answer to an HTTP/2 PING within {timeout:?}"))),
        }
    })
}

/// Runs this thread's share of an HTTP/2 load.
pub fn run(cfg: &LoadConfig, shared: &Shared, share: Share, rec: Recorder) -> Result<Output, LoadError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = tokio::task::LocalSet::new();
    let start = Instant::now();
    let busy_from = crate::rusage::thread_busy_ns();
    let ctx = Rc::new(Ctx::new(cfg, shared, &share, rec));
    local.block_on(&rt, drive(ctx.clone(), share))?;
    drop(local);
    drop(rt);
    let finished = Instant::now();
    let ctx =
        Rc::try_unwrap(ctx).map_err(|_| LoadError::Config("HTTP/2 worker tasks outlived their runtime".into()))?;
    let mut starved = ctx.starved.get();
    if let Some(since) = ctx.starved_since.get() {
        starved += finished.saturating_duration_since(since.max(ctx.measure_from));
    }
    let mut rec = ctx.rec.into_inner();
    let slow = rec.finish();
    let busy_ns = crate::rusage::thread_busy_ns().saturating_sub(busy_from);
    let busy = busy_ns as f64 / finished.saturating_duration_since(start).as_nanos().max(1) as f64;
    Ok(Output { recorder: rec, slow, finished, max_lag_ns: ctx.max_lag_ns.get(), starved, busy })
}

/// The thread's state, shared by its tasks (all on this one thread).
struct Ctx {
    cfg: LoadConfig,
    shared: Shared,
    rec: RefCell<Recorder>,
    measure_from: Instant,
    /// Requests this thread may still send (`-n`).
    quota: Cell<Option<u64>>,
    in_flight: Cell<u64>,
    stopping: Cell<bool>,
    /// Open loop: intended send times that are due, waiting for a free stream.
    due: RefCell<VecDeque<Instant>>,
    due_ready: Notify,
    /// Signalled when `-n` is used up and nothing is in flight.
    finished: Notify,
    open_loop: bool,
    max_lag_ns: Cell<u64>,
    starved: Cell<Duration>,
    starved_since: Cell<Option<Instant>>,
    /// Bytes read by the HTTP/2 layer, not yet added to the recorder.
    bytes: Rc<Cell<u64>>,
    /// With a request mix: this thread's choice of target and expansion.
    picker: RefCell<Option<crate::mix::Picker>>,
}

impl Ctx {
    fn new(cfg: &LoadConfig, shared: &Shared, share: &Share, rec: Recorder) -> Ctx {
        Ctx {
            cfg: cfg.clone(),
            shared: shared.clone(),
            rec: RefCell::new(rec),
            measure_from: share.measure_from,
            quota: Cell::new(share.quota),
            in_flight: Cell::new(0),
            stopping: Cell::new(false),
            due: RefCell::new(VecDeque::new()),
            due_ready: Notify::new(),
            finished: Notify::new(),
            open_loop: share.rate.is_some(),
            max_lag_ns: Cell::new(0),
            starved: Cell::new(Duration::ZERO),
            starved_since: Cell::new(None),
            bytes: Rc::new(Cell::new(0)),
            picker: RefCell::new(cfg.mix.clone().map(|mix| crate::mix::Picker::new(mix, share.index))),
        }
    }

    fn rec(&self) -> RefMut<'_, Recorder> {
        self.rec.borrow_mut()
    }

    /// Takes one request off the `-n` quota; false when none is left.
    fn take_quota(&self) -> bool {
        match self.quota.get() {
            Some(0) => false,
            Some(n) => {
                self.quota.set(Some(n - 1));
                true
            }
            None => true,
        }
    }

    /// `-n` is used up: nothing left to send, queued or in flight.
    fn all_sent_and_answered(&self) -> bool {
        self.quota.get() == Some(0) && self.in_flight.get() == 0 && self.due.borrow().is_empty()
    }

    /// A request that was never sent (its connection went away first).
    fn refund(&self) {
        if let Some(n) = self.quota.get() {
            self.quota.set(Some(n + 1));
        }
    }

    fn error(&self, kind: ErrorKind, now: Instant, req: Option<(Instant, Instant, u32)>) {
        self.rec().error(kind, now, req);
    }

    /// An error of a request, counted against its target with a mix.
    fn error_of(&self, target: Option<usize>, kind: ErrorKind, now: Instant, req: Option<(Instant, Instant, u32)>) {
        let mut rec = self.rec();
        if let (true, Some(t)) = (rec.error(kind, now, req), target) {
            rec.target_error(t, kind);
        }
    }
}

/// Starts the connections (and, in open loop, the dispatcher) and returns
/// when the run is over.
async fn drive(ctx: Rc<Ctx>, share: Share) -> Result<(), LoadError> {
    for id in 0..share.connections {
        tokio::task::spawn_local(connection(ctx.clone(), id as u32));
    }
    if let Some(pacer) = Pacer::for_share(&ctx.cfg, &share) {
        // SAFETY: the Timer owns its timerfd for its whole life and always
        // returns that same descriptor, so it stays valid while registered.
        let timer = unsafe { AsyncFd::register_with_interest(Timer::unregistered()?, tokio::io::Interest::READABLE) }
            .map_err(std::io::Error::from)?;
        tokio::task::spawn_local(dispatch(ctx.clone(), pacer, timer, share.end));
    }
    let tick = (ctx.cfg.timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100));
    loop {
        let now = Instant::now();
        let wake = match share.end {
            Some(end) if end > now => end.min(now + tick),
            _ => now + tick,
        };
        // Woken early when the last request of `-n` is answered.
        let _ = tokio::time::timeout_at(wake.into(), ctx.finished.notified()).await;
        let now = Instant::now();
        if ctx.cfg.interrupt.load(Ordering::Relaxed) {
            break;
        }
        if let Some(end) = share.end {
            // Open loop: the requests in flight at the end are the slowest
            // of the run; they are waited for, up to `--timeout`.
            let owed = ctx.in_flight.get() > 0 || !ctx.due.borrow().is_empty();
            if now >= end && (!ctx.open_loop || !owed || now >= end + ctx.cfg.timeout) {
                if ctx.open_loop {
                    // Scheduled, never sent: every stream stayed busy.
                    for intended in ctx.due.borrow_mut().drain(..) {
                        ctx.error(ErrorKind::Timeout, now, Some((intended, intended, u32::MAX)));
                    }
                }
                break;
            }
        }
        if ctx.all_sent_and_answered() {
            break;
        }
    }
    ctx.stopping.set(true);
    Ok(())
}

/// Open loop: moves requests onto the due queue at their intended times.
async fn dispatch(ctx: Rc<Ctx>, mut pacer: Pacer, mut timer: AsyncFd<Timer>, end: Option<Instant>) {
    loop {
        if ctx.stopping.get() {
            return;
        }
        let now = Instant::now();
        let next = pacer.next();
        if next > now {
            timer.get_mut().arm(end.map_or(next, |e| e.min(next)));
            match timer.readable_mut().await {
                Ok(mut guard) => {
                    guard.get_inner_mut().fired();
                    guard.clear_ready();
                }
                Err(_) => return,
            }
            continue;
        }
        while pacer.next() <= now {
            if end.is_some_and(|end| pacer.next() >= end) {
                return; // the schedule ends with the run
            }
            if !ctx.take_quota() {
                return;
            }
            let intended = pacer.take();
            let mut due = ctx.due.borrow_mut();
            if !due.is_empty() && ctx.starved_since.get().is_none() {
                // Due requests are piling up: every stream is busy.
                ctx.starved_since.set(Some(now));
            }
            due.push_back(intended);
            ctx.due_ready.notify_one();
        }
    }
}

/// One connection for the whole run: opened, used by `--streams` stream
/// loops, and reopened after a GOAWAY or a failure.
async fn connection(ctx: Rc<Ctx>, id: u32) {
    let mut first = true;
    while !ctx.stopping.get() {
        if !first {
            let now = Instant::now();
            if ctx.rec().measuring(now) {
                ctx.rec().reconnects += 1;
            }
        }
        first = false;
        let opened = tokio::time::timeout(ctx.cfg.timeout, ctx.shared.connector.open(ctx.bytes.clone())).await;
        let now = Instant::now();
        let (send, conn, handshake) = match opened {
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => {
                let kind = match e {
                    OpenError::Connect => ErrorKind::Connect,
                    OpenError::Tls => ErrorKind::Tls,
                    OpenError::Protocol => ErrorKind::Parse,
                };
                ctx.error(kind, now, None);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(_) => {
                ctx.error(ErrorKind::Connect, now, None);
                continue;
            }
        };
        if let Some(h) = handshake {
            ctx.rec().handshake(now, h.took, h.resumed);
        }
        let goaway = Rc::new(Cell::new(false));
        let retire = Rc::new(Cell::new(false));
        // Ends when the server closes (GOAWAY, then the last stream), the
        // connection fails, or the streams below are all dropped.
        let driver = tokio::task::spawn_local(conn);
        let streams: Vec<_> = (0..ctx.cfg.streams)
            .map(|_| tokio::task::spawn_local(stream(ctx.clone(), id, send.clone(), goaway.clone(), retire.clone())))
            .collect();
        drop(send);
        for s in streams {
            let _ = s.await;
        }
        let ended = if driver.is_finished() {
            driver.await.ok()
        } else {
            driver.abort();
            None
        };
        if let Some(Err(e)) = ended {
            if !(e.is_io() || e.is_go_away() && e.is_remote()) {
                // The server broke the protocol (or never spoke it): a parse
                // error, and a pause before the next try rather than a storm.
                ctx.error(ErrorKind::Parse, Instant::now(), None);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        if goaway.get() && ctx.rec().measuring(Instant::now()) {
            ctx.rec().goaway += 1;
        }
        if !ctx.open_loop && ctx.quota.get() == Some(0) {
            // `-n` is used up: the streams ended for want of work, not
            // because the connection failed. (A request another connection
            // hands back after a GOAWAY is resent by that connection.)
            return;
        }
    }
}

/// One stream slot: request after request until the connection goes away,
/// or is retired because a request on it timed out (`--timeout` reopens the
/// connection; the other streams finish what they sent first).
async fn stream(
    ctx: Rc<Ctx>,
    id: u32,
    send: h2::client::SendRequest<Bytes>,
    goaway: Rc<Cell<bool>>,
    retire: Rc<Cell<bool>>,
) {
    loop {
        if ctx.stopping.get() || retire.get() {
            return;
        }
        // Wait for the connection to take another stream before taking a
        // request, so a request never waits on a dead connection.
        let mut ready = match send.clone().ready().await {
            Ok(ready) => ready,
            Err(e) => {
                goaway.set(goaway.get() || (e.is_go_away() && e.is_remote()));
                return;
            }
        };
        let Some((intended, could)) = next_request(&ctx).await else { return };
        if retire.get() {
            return give_back(&ctx, intended);
        }
        let start = Instant::now();
        if ctx.open_loop {
            let lag = start.saturating_duration_since(intended.max(could)).as_nanos() as u64;
            if ctx.rec().measuring(start) {
                ctx.rec().lag.saturating_record(lag.max(1));
                ctx.max_lag_ns.set(ctx.max_lag_ns.get().max(lag));
            }
        }
        ctx.rec().sent(1, intended, start);
        ctx.in_flight.set(ctx.in_flight.get() + 1);
        let pick = ctx.picker.borrow_mut().as_mut().map(|p| {
            let t = p.next_target();
            (t, p.expansion(t))
        });
        let outcome = exchange(&ctx, &mut ready, pick).await;
        let target = pick.map(|(t, _)| t);
        let now = Instant::now();
        let req = Some((intended, start, id));
        let keep_going = match outcome {
            Ok(status) => {
                let bytes = ctx.bytes.replace(0);
                let mut rec = ctx.rec();
                if rec.measuring(now) {
                    rec.bytes_read += bytes;
                }
                if let (Some(latency), Some(t)) = (rec.response(intended, start, now, status, id), target) {
                    rec.target_response(t, latency, status);
                }
                true
            }
            Err(Failure::Timeout) => {
                ctx.error_of(target, ErrorKind::Timeout, now, req);
                retire.set(true);
                false
            }
            Err(Failure::Reset) => {
                if ctx.rec().measuring(now) {
                    ctx.rec().rst_stream += 1;
                }
                ctx.error_of(target, ErrorKind::Read, now, req);
                true
            }
            Err(Failure::NotSent { goaway: by_goaway }) => {
                goaway.set(goaway.get() || by_goaway);
                requeue(&ctx, intended, start);
                false
            }
            Err(Failure::GoneAway) => {
                // A stream above the GOAWAY's last stream id was not
                // processed (RFC 9113 §6.8): it is sent again on the next
                // connection, keeping its intended time.
                goaway.set(true);
                requeue(&ctx, intended, start);
                false
            }
            Err(Failure::Connection) => {
                ctx.error_of(target, ErrorKind::Read, now, req);
                false
            }
            Err(Failure::Protocol) => {
                ctx.error_of(target, ErrorKind::Parse, now, req);
                false
            }
        };
        ctx.in_flight.set(ctx.in_flight.get() - 1);
        if ctx.all_sent_and_answered() {
            ctx.finished.notify_one();
        }
        if !keep_going {
            return;
        }
    }
}

/// Puts a request that was never processed back: on the quota in closed
/// loop, at the front of the due queue (keeping its intended time) in open loop.
fn requeue(ctx: &Ctx, intended: Instant, start: Instant) {
    ctx.rec().unsent(intended, start); // counted when it is sent again
    give_back(ctx, intended);
}

/// Puts a request taken but never sent back where it came from.
fn give_back(ctx: &Ctx, intended: Instant) {
    if ctx.open_loop {
        ctx.due.borrow_mut().push_front(intended);
        ctx.due_ready.notify_one();
    } else {
        ctx.refund();
    }
}

/// The next request's intended send time, and since when a stream was free
/// for it; `None` when the run is over for this stream.
async fn next_request(ctx: &Ctx) -> Option<(Instant, Instant)> {
    if !ctx.open_loop {
        let now = Instant::now();
        return ctx.take_quota().then_some((now, now));
    }
    let free_since = Instant::now();
    loop {
        if ctx.stopping.get() {
            return None;
        }
        let popped = {
            let mut due = ctx.due.borrow_mut();
            let popped = due.pop_front();
            if due.is_empty() {
                if let Some(since) = ctx.starved_since.take() {
                    let now = Instant::now();
                    ctx.starved.set(ctx.starved.get() + now.saturating_duration_since(since.max(ctx.measure_from)));
                }
            }
            popped
        };
        if let Some(intended) = popped {
            return Some((intended, free_since));
        }
        ctx.due_ready.notified().await;
    }
}

enum Failure {
    /// The connection could not take the request (it went away meanwhile).
    NotSent {
        goaway: bool,
    },
    Timeout,
    Reset,
    GoneAway,
    Connection,
    /// The server broke HTTP/2 (or does not speak it): this side ended the
    /// connection with a protocol error.
    Protocol,
}

fn classify(e: &h2::Error) -> Failure {
    if e.is_go_away() && e.is_remote() {
        Failure::GoneAway
    } else if e.is_reset() && e.is_remote() {
        Failure::Reset
    } else if e.is_library() || (e.is_go_away() && !e.is_io()) {
        Failure::Protocol
    } else {
        Failure::Connection
    }
}

/// Sends one request and reads its response to the end; the status on success.
async fn exchange(
    ctx: &Ctx,
    send: &mut h2::client::SendRequest<Bytes>,
    pick: Option<(usize, u64)>,
) -> Result<u16, Failure> {
    let (request, body_bytes) = ctx.shared.request(pick);
    let body = !body_bytes.is_empty();
    let (response, mut body_out) = send.send_request(request, !body).map_err(|e| match classify(&e) {
        Failure::Protocol => Failure::Protocol,
        _ => Failure::NotSent { goaway: e.is_go_away() && e.is_remote() },
    })?;
    if body {
        body_out.send_data(body_bytes, true).map_err(|e| classify(&e))?;
    }
    let exchange = async {
        let response = response.await.map_err(|e| classify(&e))?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|e| classify(&e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        Ok(status)
    };
    match tokio::time::timeout(ctx.cfg.timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(Failure::Timeout),
    }
}
