//! Per-thread measurements: latency histograms, counters, the status-code
//! histogram, the slow-request log and the current second of the timeline.
//! Nothing here grows with the number of requests, so memory stays flat
//! however long the run; threads never share it until the run ends.

use crate::core::timeline::Timeline;
use hdrhistogram::Histogram;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Instant;

pub use stampede_schema::histogram::new_histogram;

pub use stampede_schema::Errors;

#[derive(Debug, Clone, Copy)]
pub enum ErrorKind {
    Connect,
    Read,
    Write,
    Timeout,
    Parse,
    Tls,
}

impl ErrorKind {
    /// Counts one error of this kind in `errors`.
    pub fn count_in(self, errors: &mut Errors) {
        match self {
            ErrorKind::Connect => errors.connect += 1,
            ErrorKind::Read => errors.read += 1,
            ErrorKind::Write => errors.write += 1,
            ErrorKind::Timeout => errors.timeout += 1,
            ErrorKind::Parse => errors.parse += 1,
            ErrorKind::Tls => errors.tls += 1,
        }
    }
}

/// A response outside 2xx/3xx: a bad response (docs/results.md).
#[inline]
fn bad_status(status: u16) -> bool {
    !(200..400).contains(&status)
}

/// One request of the slow log, on the monotonic clock of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Slow {
    pub latency_ns: u64,
    pub intended: Instant,
    pub start: Instant,
    pub end: Instant,
    pub connection: u32,
    pub status: u16,
    /// When it could have gone: its intended time, or when its connection
    /// became free or finished opening (see [`Origin`]).
    pub ready: Instant,
    pub connecting: bool,
}

/// Where a response came from: its connection, and when the request could
/// have gone on it. The slow log keeps both so that `stampede explain` can
/// tell a request that waited for the generator from one that waited for a
/// connection (all busy, or still opening).
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub connection: u32,
    pub ready: Instant,
    /// It waited for a connection while some were still opening (or went
    /// on a socket's first request): the wait was for connection setup.
    pub connecting: bool,
}

pub struct Recorder {
    /// Only completions from this instant on are recorded (the end of warmup)…
    pub measure_from: Instant,
    /// …and before this one (the end of a timed run).
    pub measure_until: Option<Instant>,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub lag: Histogram<u64>,
    /// TLS handshake durations, from the TCP connect being up to the first
    /// request being sendable.
    pub handshake: Histogram<u64>,
    pub tls_resumed: u64,
    /// HTTP/2 and HTTP/3: GOAWAY frames received (HTTP/3: connections that
    /// got one) and streams reset by the server.
    pub goaway: u64,
    pub rst_stream: u64,
    /// HTTP/3: packets QUIC declared lost (and sent again).
    pub lost_packets: u64,
    pub requests: u64,
    pub sent: u64,
    /// Requests still owed when the loop ended (in flight, or dropped by
    /// the server and waiting to go again): counted, with their age so far
    /// in the latency, never dropped.
    pub unanswered: u64,
    /// Open loop: requests that fell due and were never sent (every
    /// connection stayed busy); in the latency from their intended time.
    pub never_sent: u64,
    /// When the last answer (a response, or an error the server caused)
    /// came, and the longest time the server answered nothing while
    /// requests were outstanding: (from, how long).
    last_answer: Instant,
    /// Since when requests have been outstanding without a break (as the
    /// housekeeping ticks saw it).
    outstanding_since: Option<Instant>,
    pub silence: Option<(Instant, std::time::Duration)>,
    pub bytes_read: u64,
    /// HTTP/1.1 with compression asked: the responses by content coding.
    pub encodings: super::encodings::Encodings,
    pub reconnects: u64,
    pub errors: Errors,
    pub status: Box<[u64; 1000]>,
    slow: BinaryHeap<Reverse<Slow>>,
    slow_cap: usize,
    second: Second,
    timeline: Arc<Timeline>,
    /// Open loop: service time (from the actual send) differs from latency
    /// (from the intended send) and gets a histogram of its own. In closed
    /// loop the two are the same, and recording it twice is waste.
    open_loop: bool,
    /// With a request mix: the same figures per target (empty otherwise).
    pub targets: Vec<TargetStats>,
    /// With `--stages`: the same figures per stage, and when each stage ends.
    pub stages: Vec<TargetStats>,
    stage_ends: Vec<Instant>,
    /// A gRPC load: calls by status, messages (`core::grpc_tally`).
    pub grpc: Option<Box<crate::core::grpc_tally::GrpcTally>>,
}

/// What one target of a mix (or one stage) got.
pub struct TargetStats {
    pub requests: u64,
    pub errors: Errors,
    pub latency: Histogram<u64>,
}

impl TargetStats {
    fn new() -> TargetStats {
        TargetStats { requests: 0, errors: Errors::default(), latency: new_histogram() }
    }

    fn add(&mut self, other: &TargetStats) {
        self.requests += other.requests;
        self.errors.add(&other.errors);
        self.latency.add(&other.latency).expect("same histogram bounds");
    }
}

struct Second {
    index: u64,
    requests: u64,
    errors: u64,
    hist: Histogram<u64>,
}

impl Recorder {
    pub fn new(
        measure_from: Instant,
        measure_until: Option<Instant>,
        slow_cap: usize,
        timeline: Arc<Timeline>,
        open_loop: bool,
    ) -> Recorder {
        Recorder {
            measure_from,
            measure_until,
            latency: new_histogram(),
            service: new_histogram(),
            lag: new_histogram(),
            handshake: new_histogram(),
            tls_resumed: 0,
            goaway: 0,
            rst_stream: 0,
            lost_packets: 0,
            requests: 0,
            sent: 0,
            unanswered: 0,
            never_sent: 0,
            last_answer: measure_from,
            outstanding_since: None,
            silence: None,
            bytes_read: 0,
            encodings: Default::default(),
            reconnects: 0,
            errors: Errors::default(),
            status: Box::new([0; 1000]),
            slow: BinaryHeap::with_capacity(slow_cap + 1),
            slow_cap,
            second: Second { index: 0, requests: 0, errors: 0, hist: Timeline::new_second_histogram() },
            timeline,
            open_loop,
            targets: Vec::new(),
            stages: Vec::new(),
            stage_ends: Vec::new(),
            grpc: None,
        }
    }

    /// Keeps figures per stage, for stages ending at `ends`.
    pub fn with_stages(mut self, ends: Vec<Instant>) -> Recorder {
        self.stages = ends.iter().map(|_| TargetStats::new()).collect();
        self.stage_ends = ends;
        self
    }

    /// The stage an outcome counted at `at` belongs to, with stages.
    #[inline]
    fn stage(&mut self, at: Instant) -> Option<&mut TargetStats> {
        if self.stages.is_empty() {
            return None;
        }
        let i = self.stage_ends.partition_point(|&end| end <= at);
        self.stages.get_mut(i)
    }

    /// Keeps figures per target for a mix of `n` targets.
    pub fn with_targets(mut self, n: usize) -> Recorder {
        self.targets = (0..n).map(|_| TargetStats::new()).collect();
        self
    }

    /// Target `t`'s share of a response that `response` recorded.
    #[inline]
    pub fn target_response(&mut self, t: usize, latency_ns: u64, status: u16) {
        if let Some(s) = self.targets.get_mut(t) {
            s.requests += 1;
            s.latency.saturating_record(latency_ns);
            s.errors.status += bad_status(status) as u64;
        }
    }

    /// Target `t`'s share of an error that `error` counted.
    pub fn target_error(&mut self, t: usize, kind: ErrorKind) {
        if let Some(s) = self.targets.get_mut(t) {
            kind.count_in(&mut s.errors);
        }
    }

    #[inline]
    pub fn measuring(&self, now: Instant) -> bool {
        now >= self.measure_from && self.measure_until.is_none_or(|u| now < u)
    }

    /// When a request's outcome counts: by its intended send time (closed
    /// loop: its send time), in both loops, so that every request counted
    /// as sent in the measured phase has its outcome counted there, however
    /// late it ends: `sent` = responses + their errors + unanswered.
    #[inline]
    pub(crate) fn counted_at(&self, intended: Instant) -> Instant {
        intended
    }

    /// `n` requests were sent, meant for `intended` (closed loop: sent then).
    #[inline]
    pub fn sent(&mut self, n: u64, intended: Instant) {
        if self.measuring(self.counted_at(intended)) {
            self.sent += n;
        }
    }

    /// A closed loop's batch of `n`, counted by `sent` as sent at `was`,
    /// goes out at `now` instead (io_uring stamps a batch's send time just
    /// before its submit): its count moves with it when that crosses an
    /// edge of the measured phase, so that its outcome, counted by `now`,
    /// is counted where its send is. Without it, a batch queued just before
    /// the end of a `-d` run and stamped just after counted as sent and
    /// neither answered nor unanswered (`sent` 83,388 = 83,384 answered + 1
    /// unanswered + 3 in no count, a fresh clone's `make test`, 2026-11-27).
    pub fn restamp(&mut self, n: u64, was: Instant, now: Instant) {
        match (self.measuring(self.counted_at(was)), self.measuring(self.counted_at(now))) {
            (true, false) => self.sent = self.sent.saturating_sub(n),
            (false, true) => self.sent += n,
            _ => {}
        }
    }

    /// A request counted by `sent` was not processed and will be sent again.
    pub fn unsent(&mut self, intended: Instant) {
        if self.measuring(self.counted_at(intended)) {
            self.sent = self.sent.saturating_sub(1);
        }
    }

    /// A response ended at `end`; `intended` is when it should have been sent
    /// (equal to `start` in closed-loop mode). Returns its latency when it
    /// was in the measured period.
    #[inline]
    pub fn response(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        status: u16,
        from: Origin,
    ) -> Option<u64> {
        self.answer(intended, start, end, status, bad_status(status), from)
    }

    /// A response judged `bad` by its caller's rules (gRPC: a status not
    /// OK in HTTP 200 trailers), recorded as [`Recorder::response`] does.
    pub(crate) fn answer(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        status: u16,
        bad: bool,
        from: Origin,
    ) -> Option<u64> {
        let at = self.counted_at(intended);
        self.last_answer = self.last_answer.max(end);
        if !self.measuring(at) {
            return None;
        }
        let latency_ns = end.saturating_duration_since(intended).as_nanos().max(1) as u64;
        self.latency.saturating_record(latency_ns);
        if self.open_loop {
            let service_ns = end.saturating_duration_since(start).as_nanos().max(1) as u64;
            self.service.saturating_record(service_ns);
        }
        self.requests += 1;
        self.status[(status as usize).min(999)] += 1;
        if bad {
            self.errors.status += 1;
        }
        if let Some(s) = self.stage(at) {
            s.requests += 1;
            s.latency.saturating_record(latency_ns);
            s.errors.status += bad as u64;
        }
        self.tick(at);
        self.second.requests += 1;
        self.second.errors += bad as u64;
        self.second.hist.saturating_record(latency_ns);
        if self.slow_cap > 0 {
            let (connection, ready, connecting) = (from.connection, from.ready, from.connecting);
            self.note_slow(Slow { latency_ns, intended, start, end, connection, status, ready, connecting });
        }
        Some(latency_ns)
    }

    /// Counts an error; true when it was in the measured period.
    pub fn error(&mut self, kind: ErrorKind, now: Instant, intended: Option<(Instant, Instant, u32)>) -> bool {
        let at = intended.map_or(now, |(i, _, _)| self.counted_at(i));
        if !matches!(kind, ErrorKind::Timeout) {
            // The server did something (closed, reset, spoke nonsense).
            self.last_answer = self.last_answer.max(now);
        }
        if !self.measuring(at) {
            return false;
        }
        kind.count_in(&mut self.errors);
        if let Some(s) = self.stage(at) {
            kind.count_in(&mut s.errors);
        }
        if let (true, ErrorKind::Timeout, Some((intended, _, _))) = (self.open_loop, kind, intended) {
            // Open loop: a request that timed out fell due all the same, and
            // what it waited belongs in the latency (docs/load.md).
            self.latency.saturating_record(now.saturating_duration_since(intended).as_nanos().max(1) as u64);
        }
        self.tick(at);
        self.second.errors += 1;
        // A request that never got an answer is as slow as the run let it be:
        // it belongs in the slow log (with status 0), not silently dropped.
        if let Some((intended, start, conn)) = intended {
            let latency_ns = now.saturating_duration_since(intended).as_nanos() as u64;
            self.slow_unanswered(latency_ns, intended, start, now, conn);
        }
        true
    }

    /// A request still owed when the loop ends at `now`: counted as
    /// unanswered (by when it was sent, as `sent` counts it), its age so far
    /// in the latency from its intended time, and in the slow log.
    pub fn unanswered(&mut self, intended: Instant, start: Instant, now: Instant, connection: u32) {
        if !self.measuring(self.counted_at(intended)) {
            return;
        }
        self.unanswered += 1;
        self.unheard(intended, start, now, connection);
    }

    /// Open loop: a request due at `intended` that was never sent by `now`,
    /// the end of the schedule: counted, and in the latency from then.
    pub fn never_sent(&mut self, intended: Instant, now: Instant) {
        if !self.measuring(intended) {
            return;
        }
        self.never_sent += 1;
        self.unheard(intended, intended, now, u32::MAX);
    }

    /// The age at `now` of a request that got no answer, in the latency
    /// (and the slow log, with status 0): what it waited is what it cost.
    fn unheard(&mut self, intended: Instant, start: Instant, now: Instant, connection: u32) {
        let latency_ns = now.saturating_duration_since(intended).as_nanos().max(1) as u64;
        self.latency.saturating_record(latency_ns);
        self.slow_unanswered(latency_ns, intended, start, now, connection);
    }

    /// A request with no response, in the slow log with status 0.
    fn slow_unanswered(&mut self, latency_ns: u64, intended: Instant, start: Instant, end: Instant, connection: u32) {
        if self.slow_cap > 0 {
            let slow =
                Slow { latency_ns, intended, start, end, connection, status: 0, ready: start, connecting: false };
            self.note_slow(slow);
        }
    }

    /// Notes at `now` that the oldest request still outstanding was sent at
    /// `oldest` (none outstanding: `None`). The time since the last answer,
    /// or since requests have been outstanding without a break if later, is
    /// a silence of the server (requests that time out and are replaced do
    /// not end it), and the longest one in the measured phase is kept.
    /// Each loop calls this at its housekeeping tick and once at its end.
    pub fn outstanding(&mut self, oldest: Option<Instant>, now: Instant) {
        let Some(oldest) = oldest else {
            self.outstanding_since = None;
            return;
        };
        let since = *self.outstanding_since.get_or_insert(oldest);
        let from = self.last_answer.max(since).max(self.measure_from);
        let took = now.saturating_duration_since(from);
        if self.silence.is_none_or(|(_, longest)| took > longest) {
            self.silence = Some((from, took));
        }
    }

    /// A TLS handshake finished after `took`.
    pub fn handshake(&mut self, now: Instant, took: std::time::Duration, resumed: bool) {
        if self.measuring(now) {
            self.handshake.saturating_record(took.as_nanos().max(1) as u64);
            self.tls_resumed += resumed as u64;
        }
    }

    fn note_slow(&mut self, s: Slow) {
        if self.slow.len() < self.slow_cap {
            self.slow.push(Reverse(s));
        } else if let Some(Reverse(min)) = self.slow.peek() {
            if s.latency_ns > min.latency_ns {
                self.slow.pop();
                self.slow.push(Reverse(s));
            }
        }
    }

    /// Moves the per-second bucket on when `now` is in a later second.
    #[inline]
    fn tick(&mut self, now: Instant) {
        let index = now.saturating_duration_since(self.measure_from).as_secs();
        if index != self.second.index {
            self.flush_second();
            self.second.index = index;
        }
    }

    fn flush_second(&mut self) {
        if self.second.requests > 0 || self.second.errors > 0 {
            self.timeline.add(self.second.index, self.second.requests, self.second.errors, &self.second.hist);
            self.second.requests = 0;
            self.second.errors = 0;
            self.second.hist.reset();
        }
    }

    /// Ends the thread's recording: flushes the last second.
    pub fn finish(&mut self) -> Vec<Slow> {
        self.flush_second();
        std::mem::take(&mut self.slow).into_iter().map(|Reverse(s)| s).collect()
    }

    pub fn merge(&mut self, other: &Recorder) {
        self.latency.add(&other.latency).expect("same histogram bounds");
        self.service.add(&other.service).expect("same histogram bounds");
        self.lag.add(&other.lag).expect("same histogram bounds");
        self.handshake.add(&other.handshake).expect("same histogram bounds");
        self.tls_resumed += other.tls_resumed;
        self.goaway += other.goaway;
        self.rst_stream += other.rst_stream;
        self.lost_packets += other.lost_packets;
        self.requests += other.requests;
        self.sent += other.sent;
        self.unanswered += other.unanswered;
        self.never_sent += other.never_sent;
        if other.silence.is_some_and(|(_, o)| self.silence.is_none_or(|(_, s)| o > s)) {
            self.silence = other.silence;
        }
        self.bytes_read += other.bytes_read;
        self.encodings.add(&other.encodings);
        self.reconnects += other.reconnects;
        self.errors.add(&other.errors);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        for (a, b) in self.targets.iter_mut().zip(&other.targets).chain(self.stages.iter_mut().zip(&other.stages)) {
            a.add(b);
        }
        if let (Some(a), Some(b)) = (self.grpc.as_mut(), other.grpc.as_ref()) {
            a.add(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn warmup_is_measured_but_not_recorded_and_slow_log_keeps_the_slowest() {
        let t0 = Instant::now();
        let from = t0 + Duration::from_secs(1);
        let mut r = Recorder::new(from, None, 2, Arc::new(Timeline::default()), true);
        let on = |connection: u32, ready: Instant| Origin { connection, ready, connecting: false };
        r.response(t0, t0, t0 + Duration::from_millis(5), 200, on(0, t0));
        assert_eq!(r.requests, 0, "a warmup response is not recorded");
        for (i, ms) in [3u64, 9, 1, 7].into_iter().enumerate() {
            let start = from + Duration::from_millis(10 * i as u64);
            r.response(start, start, start + Duration::from_millis(ms), 503, on(i as u32, start));
        }
        assert_eq!(r.requests, 4);
        assert_eq!(r.errors.status, 4);
        assert_eq!(r.status[503], 4);
        let mut slow: Vec<u64> = r.finish().iter().map(|s| s.latency_ns / 1_000_000).collect();
        slow.sort();
        assert_eq!(slow, [7, 9]);
    }

    #[test]
    fn requests_outstanding_with_no_answer_are_a_silence_until_an_answer_ends_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut r = Recorder::new(t0, None, 0, Arc::new(Timeline::default()), false);
        let on = Origin { connection: 0, ready: t0, connecting: false };
        r.response(at(0), at(0), at(100), 200, on);
        r.outstanding(Some(at(200)), at(500));
        assert_eq!(r.silence, Some((at(200), Duration::from_millis(300))));
        // A timeout replaced the request: the server is silent all the same.
        r.error(ErrorKind::Timeout, at(1000), Some((at(200), at(200), 0)));
        r.outstanding(Some(at(1000)), at(2000));
        assert_eq!(r.silence, Some((at(200), Duration::from_millis(1800))));
        r.outstanding(None, at(2050));
        r.response(at(2100), at(2100), at(2150), 200, on);
        r.outstanding(Some(at(2200)), at(2500));
        assert_eq!(r.silence, Some((at(200), Duration::from_millis(1800))), "the longest is kept");
    }

    #[test]
    fn a_batch_restamped_across_an_edge_of_the_measured_phase_moves_its_sent_count_with_it() {
        let t0 = Instant::now();
        let (from, until) = (t0 + Duration::from_secs(1), t0 + Duration::from_secs(2));
        let mut r = Recorder::new(from, Some(until), 4, Arc::new(Timeline::default()), true);
        let just_before_end = until - Duration::from_micros(5);
        r.sent(2, just_before_end);
        r.restamp(2, just_before_end, until + Duration::from_micros(5));
        assert_eq!(r.sent, 0, "stamped past the end: its outcome is not counted, nor its send");
        r.sent(1, from - Duration::from_micros(5));
        r.restamp(1, from - Duration::from_micros(5), from + Duration::from_micros(5));
        assert_eq!(r.sent, 1, "stamped into the phase: counted as its outcome will be");
        r.sent(3, from + Duration::from_millis(10));
        r.restamp(3, from + Duration::from_millis(10), from + Duration::from_millis(11));
        assert_eq!(r.sent, 4, "inside the phase both times: unchanged");
    }

    #[test]
    fn unanswered_and_never_sent_requests_are_counted_with_their_age_in_the_latency() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, None, 4, Arc::new(Timeline::default()), true);
        r.unanswered(t0, t0, t0 + Duration::from_secs(3), 1);
        r.never_sent(t0 + Duration::from_secs(1), t0 + Duration::from_secs(2));
        assert_eq!((r.unanswered, r.never_sent, r.requests, r.latency.len()), (1, 1, 0, 2));
        assert!(r.latency.max() >= 2_990_000_000, "{}", r.latency.max());
        assert!(r.finish().iter().all(|s| s.status == 0));
    }
}
