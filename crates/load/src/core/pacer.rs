//! The open-loop schedule: the intended send time of every request, and a
//! timer precise enough to keep to it.
//!
//! Intended times are computed from a counter (uniform) or drawn one at a time
//! (Poisson), so requests that are due while every connection is busy wait in
//! a queue that costs no memory: the queue is just the schedule not yet sent.
//! epoll's own timeout has millisecond resolution, too coarse at thousands of
//! requests per second, so the pacer arms a `timerfd` instead (microseconds,
//! with the thread's timer slack lowered to match).
//!
//! A loop does not wake for every request: it wakes at the earliest due send,
//! but no sooner than a granularity that follows the rate ([`granularity`])
//! after its last wake-up that sent, and sends every request due by then in
//! one submission. The wait the granularity
//! adds is counted (latency runs from the intended time, and the schedule
//! lag shows it); what it saves is a wake-up, a timer and a submission per
//! request, most of an open-loop generator's cost at tens of thousands of
//! requests per second.

use crate::config::{Arrival, LoadConfig, Protocol};
use crate::core::share::Share;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use stampede_schema::units::MAX_DURATION;
use stampede_spec::stages::Ramp;
use stampede_spec::stages::Stages;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

pub struct Pacer {
    /// Where the schedule's times run from: the run's start, until the loop
    /// moves it to when its first connection is open ([`Pacer::move_origin`]).
    origin: Instant,
    first: Instant,
    interval_ns: f64,
    arrival: Arrival,
    rng: SmallRng,
    issued: u64,
    next: Instant,
    /// With `--stages`: this thread's ramped rate, from `origin`, and how
    /// many requests are due so far (phase plus whole or random steps).
    ramp: Option<(Stages, f64)>,
    /// How long after the earliest due send the loop wakes ([`granularity`]).
    granularity: Duration,
    /// When a request was last taken off the schedule (the loop's last
    /// wake-up that sent something).
    last_take: Option<Instant>,
}

/// Requests a wake-up should find due, on average, besides the first: the
/// granularity is the time this many take at the thread's rate. Eight makes
/// a wake-up's fixed cost (a system call, a context switch, a timer) about a
/// ninth of what it was per request, while the wait it adds stays a small
/// share of a loopback round trip at tens of thousands of requests a second.
/// Chosen by that reasoning, not tuned by timing: `BASE=<rev>
/// bench/openloop.sh` measures a change of it against the revision before.
const REQUESTS_PER_WAKE: f64 = 8.0;

/// The longest a due request waits for the loop's next wake by design: at
/// low rates batching saves almost nothing (a few hundred wake-ups a second
/// cost a fraction of a percent of a core), so the added wait stays small
/// against the latencies measured. wrk2 sends on millisecond timers; this
/// keeps below that.
pub const MAX_GRANULARITY: Duration = Duration::from_micros(500);

/// How long after the earliest due send an open-loop thread sending
/// `rate_per_s` requests a second wakes, to send every request due by then
/// in one submission: the time [`REQUESTS_PER_WAKE`] requests take, at most
/// [`MAX_GRANULARITY`] (HTTP/1.1 without `--max-granularity`). The wait is part of each request's latency (it runs
/// from the intended time) and of the schedule lag; a lag beyond it is the
/// generator falling behind, and that is what the saturation verdict judges.
pub fn granularity(rate_per_s: f64) -> Duration {
    granularity_of(Protocol::default(), None, rate_per_s)
}

/// The HTTP/2 loop's longest wake-up granularity, in place of
/// [`MAX_GRANULARITY`]: it wakes for the schedule once per the time 8 of
/// its requests take, as the other loops do, but at most every 1 ms (wrk2's
/// timer resolution) rather than every 500 us, and sends every request due by then, on every
/// connection, in one write per connection. A wake-up of that loop costs a
/// sleep, a read per connection in use and a write per connection with
/// something due (`http2::event_loop`), so at a few thousand requests a
/// second its wake-ups, not its requests, were its cost: at 2,000 gRPC calls
/// a second, one wake-up per call and 3.6 system calls per call, where h2load
/// (a timer per connection) made about 2. Measured on a quiet 2-core
/// machine (bench/grpc.sh, 2026-11-27), calls per generator core-second at
/// 2,000/s: 18.5k with a 500 us cap, 34.5k with 1 ms, 55.6k with 2 ms; the
/// cap is the longest wait added to a request's latency, so 1 ms, the
/// resolution wrk2's timers give, is where it stops: cost matters at high
/// rates, where 8 requests take less than the cap anyway. The wait is at
/// most one tick, counted in each request's latency (from its intended
/// time) and in the schedule lag, and reported as `wake_granularity_us`.
/// `--max-granularity` replaces it ([`max_granularity`]).
pub const MAX_STREAM_TICK: Duration = Duration::from_millis(1);

/// The longest wake-up granularity of a run of `protocol`: `--max-granularity`
/// when given (`asked`), else [`MAX_STREAM_TICK`] for HTTP/2 and
/// [`MAX_GRANULARITY`] for the others.
///
/// A longer one is cheaper at a few thousand requests a second, because the
/// cost there is wake-ups, not system calls: each wake-up is the generator's
/// own (timer, switch in and out of idle) and, on loopback, the server's
/// (the first write of a burst wakes its idle thread; the rest find it
/// awake). At 2,000 gRPC calls a second against grpc-go (2026-11-27, busy
/// 2-core VM, `perf stat` on the generator), per call: with 1 ms, 0.46
/// wake-ups, 0.45 it gave the server, 24 us of task-clock; with 4 ms, 0.12,
/// 0.12 and 8.3 us; h2load `--rps`, whose libev timers fire together about
/// every 4 ms, 0.12, 0.10 and 10 us (docs/load.md, "The wake-up
/// granularity"). The price is latency: a due request waits up to the
/// granularity, counted from its intended time, so the default stays 1 ms
/// and a user who wants h2load's economy asks for it.
pub fn max_granularity(protocol: Protocol, asked: Option<Duration>) -> Duration {
    asked.unwrap_or(match protocol {
        Protocol::Http2 { .. } => MAX_STREAM_TICK,
        _ => MAX_GRANULARITY,
    })
}

/// The wake-up granularity of a run of `protocol` at `rate_per_s` requests
/// a second per thread: the time [`REQUESTS_PER_WAKE`] requests take, at most
/// [`max_granularity`] (`asked`: `--max-granularity`).
pub fn granularity_of(protocol: Protocol, asked: Option<Duration>, rate_per_s: f64) -> Duration {
    let cap = max_granularity(protocol, asked);
    if rate_per_s.is_nan() || rate_per_s <= 0.0 {
        return cap;
    }
    Duration::from_secs_f64(REQUESTS_PER_WAKE / rate_per_s).min(cap)
}

impl Pacer {
    /// `rate` is this thread's share of requests per second; `phase` offsets
    /// this thread's schedule so threads interleave instead of bursting together.
    pub fn new(start: Instant, rate: f64, arrival: Arrival, phase: f64, seed: u64) -> Pacer {
        let interval_ns = 1e9 / rate;
        let first = start + Duration::from_nanos((interval_ns * phase) as u64);
        Pacer {
            origin: start,
            first,
            interval_ns,
            arrival,
            rng: SmallRng::seed_from_u64(seed),
            issued: 0,
            next: first,
            ramp: None,
            granularity: granularity(rate),
            last_take: None,
        }
    }

    /// The pacer of a thread's share: its rate, or its share of the stages.
    pub fn for_share(cfg: &LoadConfig, share: &Share) -> Option<Pacer> {
        let rate = share.rate?;
        let phase = share.index as f64 / cfg.threads as f64;
        let start = share.measure_from.min(share.start);
        let mut pacer = Pacer::new(start, rate, cfg.arrival, phase, share.index as u64 + 1);
        pacer.granularity = granularity_of(cfg.protocol, cfg.max_granularity, rate);
        if let Some(stages) = cfg.stages.as_ref().filter(|s| s.ramp == Ramp::Rate) {
            let mine = stages.scaled(1.0 / cfg.threads as f64);
            pacer.next = at(start, mine.time_of(phase));
            pacer.ramp = Some((mine, phase));
        }
        Some(pacer)
    }

    #[inline]
    pub fn next(&self) -> Instant {
        self.next
    }

    /// Where the schedule's times run from.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Moves the schedule's origin to `to`, and every intended time with
    /// it (a thread's phase, a ramp's stages, the first Poisson arrival).
    /// Only before the first request is taken: the times are not re-drawn.
    pub fn move_origin(&mut self, to: Instant) {
        debug_assert_eq!(self.issued, 0, "the origin moves before any request is taken");
        let from = self.origin;
        let moved = |t: Instant| to + t.saturating_duration_since(from);
        (self.first, self.next) = (moved(self.first), moved(self.next));
        self.origin = to;
    }

    /// When the loop wakes to send what is due: at the next send, but no
    /// sooner than the granularity after the last wake-up that sent, so that
    /// at high rates one wake-up sends several requests, and at low rates
    /// (a request's interval longer than the granularity) every request goes
    /// at its own time, with no wait added.
    #[inline]
    pub fn wake(&self) -> Instant {
        match self.last_take {
            Some(last) => self.next.max(last + self.granularity),
            None => self.next,
        }
    }

    /// Takes the next intended send time off the schedule, on a wake-up at `now`.
    #[inline]
    pub fn take(&mut self, now: Instant) -> Instant {
        self.last_take = Some(now);
        let t = self.next;
        self.issued += 1;
        if let Some((stages, due)) = self.ramp.as_mut() {
            // One request further along the rate's integral: a whole step,
            // or an exponential one (a Poisson process of that rate).
            *due += match self.arrival {
                Arrival::Uniform => 1.0,
                Arrival::Poisson => -self.rng.gen_range(f64::EPSILON..1.0).ln(),
            };
            self.next = at(self.origin, stages.time_of(*due));
            return t;
        }
        self.next = match self.arrival {
            // From the counter, not by adding intervals: no drift over long runs.
            Arrival::Uniform => self.first + Duration::from_nanos((self.issued as f64 * self.interval_ns) as u64),
            Arrival::Poisson => {
                let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                t + Duration::from_nanos((-u.ln() * self.interval_ns) as u64)
            }
        };
        t
    }
}

/// `origin` plus `secs`; past the last stage, a day past it (the run ends first).
fn at(origin: Instant, secs: Option<f64>) -> Instant {
    origin + Duration::from_secs_f64(secs.unwrap_or(MAX_DURATION.as_secs_f64() + 86_400.0))
}

/// A one-shot CLOCK_MONOTONIC timer registered in the worker's poll.
pub struct Timer {
    fd: OwnedFd,
    armed: Option<Instant>,
    origin: Instant,
    origin_ns: u64,
}

impl Timer {
    /// The open loop's timer of a thread sending `rate` requests a second;
    /// none in closed loop (no rate).
    pub fn for_rate(rate: Option<f64>, registry: &Registry, token: Token) -> io::Result<Option<Timer>> {
        rate.map(|_| Timer::new(registry, token)).transpose()
    }

    pub fn new(registry: &Registry, token: Token) -> io::Result<Timer> {
        let timer = Timer::unregistered()?;
        registry.register(&mut SourceFd(&timer.fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(timer)
    }

    fn unregistered() -> io::Result<Timer> {
        // SAFETY: plain syscalls; the fd is checked and then owned.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        fine_timer_slack();
        Ok(Timer { fd, armed: None, origin: Instant::now(), origin_ns: crate::core::rusage::monotonic_ns() })
    }

    /// Arms the timer for `at` unless it already is.
    pub fn arm(&mut self, at: Instant) {
        if self.armed == Some(at) {
            return;
        }
        self.armed = Some(at);
        let ns = self.origin_ns + at.saturating_duration_since(self.origin).as_nanos() as u64;
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 },
        };
        // SAFETY: valid fd and struct; a failure only means a late wake-up,
        // which the schedule-lag figure then reports.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// Consumes the expiration after the timer fired.
    pub fn fired(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into our buffer; EAGAIN is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed = None;
    }
}

/// Lowers the calling thread's timer slack from the default 50 µs to 1 µs:
/// the schedule wants its wake-ups on time.
pub fn fine_timer_slack() {
    // SAFETY: a plain prctl on the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_schedule_does_not_drift_and_poisson_keeps_the_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, 3000.0, Arrival::Uniform, 0.0, 1);
        let mut last = t0;
        for _ in 0..30_000 {
            last = p.take(t0);
        }
        let elapsed = last.duration_since(t0).as_secs_f64();
        assert!((elapsed - 29_999.0 / 3000.0).abs() < 1e-6, "{elapsed}");
        let mut p = Pacer::new(t0, 1000.0, Arrival::Poisson, 0.0, 7);
        for _ in 0..20_000 {
            last = p.take(t0);
        }
        let rate = 20_000.0 / last.duration_since(t0).as_secs_f64();
        assert!((rate - 1000.0).abs() < 30.0, "{rate}");
    }

    #[test]
    fn the_wake_up_granularity_shrinks_as_the_rate_grows_and_is_capped() {
        // Low rates: the cap (few wake-ups to save, and the wait stays small).
        for rate in [0.0, 1.0, 1000.0, f64::NAN] {
            assert_eq!(granularity(rate), MAX_GRANULARITY, "{rate}");
        }
        // Above it: the time of the same number of requests, whatever the rate.
        let (g50k, g100k) = (granularity(50_000.0), granularity(100_000.0));
        assert!(g50k < MAX_GRANULARITY && g100k < g50k);
        let per_wake = |rate: f64| granularity(rate).as_secs_f64() * rate;
        assert!((per_wake(50_000.0) - per_wake(100_000.0)).abs() < 1e-6);
        assert!(per_wake(50_000.0) >= 1.0);
        assert!(per_wake(1000.0) < per_wake(50_000.0));
    }

    #[test]
    fn http2_wakes_for_eight_requests_up_to_its_own_longer_cap() {
        let h1 = Protocol::default();
        let h2 = Protocol::Http2 { streams: 10, carry: stampede_spec::protocol::Carry::Grpc };
        // 2,000 calls/s: 8 take 4 ms; HTTP/2 waits up to 1 ms, HTTP/1.1 500 us.
        assert_eq!(granularity_of(h2, None, 2000.0), MAX_STREAM_TICK);
        assert_eq!(granularity_of(h1, None, 2000.0), MAX_GRANULARITY);
        // High rates: the same 8 requests a wake-up for both.
        assert_eq!(granularity_of(h2, None, 80_000.0), granularity(80_000.0));
        assert_eq!(granularity_of(h2, None, f64::NAN), MAX_STREAM_TICK);
        // At 500/s a request's interval is the tick: each goes at its own time.
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, 500.0, Arrival::Uniform, 0.0, 1);
        p.granularity = granularity_of(h2, None, 500.0);
        p.take(p.wake());
        assert_eq!(p.wake(), p.next());
    }

    #[test]
    fn max_granularity_sets_the_cap_and_nothing_else() {
        let h2 = Protocol::Http2 { streams: 10, carry: stampede_spec::protocol::Carry::Grpc };
        let four = Some(Duration::from_millis(4));
        // 2,000/s: 8 requests take 4 ms, so a 4 ms cap is reached; 3 ms caps it.
        assert_eq!(granularity_of(h2, four, 2000.0), Duration::from_millis(4));
        assert_eq!(granularity_of(h2, Some(Duration::from_millis(3)), 2000.0), Duration::from_millis(3));
        // High rates: still the time of 8 requests, whatever the cap.
        assert_eq!(granularity_of(h2, four, 80_000.0), granularity(80_000.0));
        // Zero: every request at its own time, for every protocol.
        assert_eq!(granularity_of(Protocol::default(), Some(Duration::ZERO), 50_000.0), Duration::ZERO);
        assert_eq!(max_granularity(h2, None), MAX_STREAM_TICK);
        assert_eq!(max_granularity(Protocol::default(), None), MAX_GRANULARITY);
    }

    /// The loop's wait at 2,000 requests a second with a granularity `g`:
    /// every wake-up sends what is due; the next one is never before a
    /// request is due (no wake-up for nothing) and never more than `g` after
    /// the earliest due one (no oversleeping beyond the granularity).
    fn waits(g: Duration) -> (Duration, usize) {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, 2000.0, Arrival::Uniform, 0.0, 1);
        p.granularity = g;
        let (mut longest, mut wakes) = (Duration::ZERO, 0);
        let mut now = p.wake();
        while now < t0 + Duration::from_secs(1) {
            assert!(p.next() <= now, "woke at {:?} with nothing due", now - t0);
            while p.next() <= now {
                longest = longest.max(now - p.take(now));
            }
            wakes += 1;
            let next = p.wake();
            assert!(next >= p.next(), "would wake before the next request is due");
            assert!(next <= p.next().max(now) + g, "would sleep past the earliest due send plus {g:?}");
            now = next;
        }
        (longest, wakes)
    }

    #[test]
    fn a_wake_up_waits_for_a_due_request_and_no_longer_than_the_granularity() {
        // 1 ms (HTTP/2's default): two requests a wake-up, the first waits 0.5 ms.
        let (longest, wakes) = waits(Duration::from_millis(1));
        assert_eq!(longest, Duration::from_micros(500));
        assert!((999..=1001).contains(&wakes), "{wakes}");
        // 4 ms (--max-granularity 4ms): a quarter of the wake-ups, up to 3.5 ms wait.
        let (longest, wakes) = waits(Duration::from_millis(4));
        assert_eq!(longest, Duration::from_micros(3500));
        assert!((249..=251).contains(&wakes), "{wakes}");
        // 0: each request at its own time, never late.
        let (longest, wakes) = waits(Duration::ZERO);
        assert_eq!(longest, Duration::ZERO);
        assert!((1999..=2001).contains(&wakes), "{wakes}");
    }

    #[test]
    fn low_rates_send_on_time_and_high_rates_wake_once_per_granularity() {
        let t0 = Instant::now();
        // 1,000 req/s: each request is due after the granularity has passed,
        // so the loop wakes at its intended time and adds no wait.
        let mut p = Pacer::new(t0, 1000.0, Arrival::Uniform, 0.0, 1);
        assert_eq!(p.wake(), p.next());
        for _ in 0..5 {
            let due = p.take(p.wake());
            assert_eq!(p.wake(), p.next(), "after the request due at {due:?}");
        }
        // 80,000 req/s: after a wake-up that sent, the next one waits the
        // granularity, and by then several requests are due.
        let mut p = Pacer::new(t0, 80_000.0, Arrival::Uniform, 0.0, 1);
        let woke = p.wake();
        p.take(woke);
        let next = p.wake();
        assert_eq!(next, woke + granularity(80_000.0));
        let mut due = 0;
        while p.next() <= next {
            p.take(next);
            due += 1;
        }
        assert!(due >= 2, "{due} requests per wake-up");
    }

    #[test]
    fn moving_the_origin_moves_every_intended_time_with_it() {
        let t0 = Instant::now();
        let later = Duration::from_millis(250);
        let stages = Stages::parse("1s:1000,1s:1000", Ramp::Rate).unwrap();
        for (arrival, staged) in [(Arrival::Uniform, false), (Arrival::Poisson, false), (Arrival::Uniform, true)] {
            // Two threads' pacers of one seed and phase, one moved 250 ms on.
            let [mut a, mut b] = [0, 1].map(|_| Pacer::new(t0, 1000.0, arrival, 0.5, 3));
            if staged {
                for p in [&mut a, &mut b] {
                    p.next = at(t0, stages.time_of(0.5));
                    p.ramp = Some((stages.clone(), 0.5));
                }
            }
            b.move_origin(t0 + later);
            assert_eq!(b.origin(), t0 + later);
            for k in 0..500 {
                assert_eq!(b.take(t0) - a.take(t0), later, "{arrival:?}, staged {staged}: request {k}");
            }
        }
    }

    #[test]
    fn a_staged_schedule_sends_each_stage_the_requests_of_its_ramp() {
        let t0 = Instant::now();
        let stages = Stages::parse("2s:1000,2s:1000,2s:0", Ramp::Rate).unwrap();
        for arrival in [Arrival::Uniform, Arrival::Poisson] {
            let mut p = Pacer::new(t0, stages.mean(), arrival, 0.0, 3);
            p.next = at(t0, stages.time_of(0.0));
            p.ramp = Some((stages.clone(), 0.0));
            let mut per_stage = [0u32; 3];
            loop {
                let t = p.take(t0).duration_since(t0).as_secs_f64();
                if t >= 6.0 {
                    break;
                }
                per_stage[(t / 2.0) as usize] += 1;
            }
            // 1000 up the ramp, 2000 flat, 1000 down (Poisson within its noise).
            let slack = if arrival == Arrival::Uniform { 1.0 } else { 150.0 };
            for (got, want) in per_stage.iter().zip([1000.0, 2000.0, 1000.0]) {
                assert!((*got as f64 - want).abs() <= slack, "{arrival:?}: {per_stage:?}");
            }
        }
    }
}
