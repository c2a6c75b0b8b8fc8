//! One load-generator thread on io_uring, for cleartext HTTP/1.1: the
//! default engine wherever the kernel allows it.
//!
//! The epoll loop (`http1/epoll.rs`) already spends only one `sendto` and one
//! `recvfrom` per request, but each is a system call of its own, and every
//! response wakes the thread through epoll's callback. Here a request is one
//! `Send` entry and its response one completion of a multishot receive that
//! stays armed for the connection's life, filling buffers the kernel picks
//! from a shared ring (`http1/uring_bufs.rs`): the sends and receives of every
//! connection that is ready in a batch cost one `io_uring_enter` together.
//! On this project's 2-core VM (2026-11-25, `bench/loadgen.sh 4 5 32 256
//! 1000`) it does 1.09x, 1.12x and 1.11x wrk's requests per core-second at
//! 32, 256 and 1000 connections; the epoll loop 1.09x, 1.07x and 1.08x.
//!
//! Each read carries the kernel's receive time (`core/rx_time.rs`), so a
//! response's latency ends when it arrived, not when this thread handled it.
//! That makes it free to wake less often: in closed loop the wait asks for
//! the responses of all connections but a few ([`gather_for`]) and settles
//! for any after [`GATHER_US`] (the kernel's `min_wait`, 6.12+; one wake-up
//! per response otherwise). The server loses nothing: the connections not
//! waited for still have their requests queued at it.
//!
//! Completion tags carry a generation per connection: a reconnect bumps it,
//! so completions of the old socket (shut down, never leaked) are recognised
//! and only their buffers are returned. What the run records is the shared
//! cycle's (`http1/cycle.rs`), exactly as under epoll; only the way bytes move differs.

use crate::config::LoadConfig;
use crate::core::housekeeping::Parts;
use crate::core::output::Output;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::rx_time::{self, Clocks, GATHER_US};
use crate::core::share::Share;
use crate::http1::conn::ConnState;
use crate::http1::cycle::{peer_gone, Cycle, CycleState};
use crate::http1::uring_bufs::{self, BufRing, GROUP};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use mio::net::TcpStream;
use std::io;
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const CONNECT: u64 = 0;
const SEND: u64 = 1;
const RECV: u64 = 2;
/// One receive buffer: a whole small response, or a good bite of a big one.
const BUF_SIZE: usize = 16 * 1024;

fn tag(kind: u64, gen: u32, id: usize) -> u64 {
    (gen as u64) << 34 | kind << 32 | id as u64
}

fn untag(data: u64) -> (u64, u32, usize) {
    ((data >> 32) & 3, (data >> 34) as u32, (data & 0xffff_ffff) as usize)
}

pub struct UringLoop<'a> {
    cycle: CycleState<'a, TcpStream>,
    batch: &'a [u8],
    // Declared before `bufs`: the ring goes first when the worker is dropped.
    ring: IoUring,
    bufs: BufRing,
    /// Per connection, bumped at every reconnect: completions of an older
    /// socket are stale.
    gens: Vec<u32>,
    /// Operations submitted whose last completion has not been seen.
    in_flight_ops: usize,
    /// Connections (and their generation) whose multishot receive ended and
    /// must be armed again, unless the socket was replaced meanwhile.
    rearm: Vec<(u32, u32)>,
    completions: Vec<(u64, i32, u32)>,
    /// Connections whose request was queued in this batch: they all leave
    /// at the next `io_uring_enter`, so they share one clock reading.
    queued: Vec<u32>,
    /// The multishot `recvmsg` template: no address, room for the receive time.
    msghdr: Box<libc::msghdr>,
    /// Closed loop on a kernel with `min_wait`: responses to wait for.
    gather: Option<usize>,
    /// Sends submitted whose completion has not been seen. A send on a
    /// socket with room completes inside the submit, so its completion is
    /// there before the wait begins: counted as one of `gather`, it would
    /// end the wait at once, and a batch took two `io_uring_enter`s (one
    /// that returned the sends, one that waited for the responses).
    sends_in_flight: usize,
}

/// Responses a closed-loop wait asks for with `c` connections: all but
/// the requests that keep the server busy while this thread turns the batch
/// around (half the connections, at least 4 and at most 8), and at most
/// [`MOST_AWAITED`]. Asking for a fixed share starves the server at one end
/// or wakes too often at the other: tried by hand during development,
/// three quarters of 8 connections left nginx idle for much of each batch
/// (less than half the requests per second), and half of 4 cost a third of
/// them; at 32 connections, all but 8 spent fewer wake-ups per response than
/// half at the same rate. `BASE=<rev> bench/loadgen.sh` measures a change
/// of it against the revision before.
fn gather_for(c: usize) -> usize {
    let keep = (c / 2).clamp(4, 8);
    c.saturating_sub(keep).clamp(1, MOST_AWAITED)
}

/// What ends a wait besides its timeout.
#[derive(Clone, Copy)]
enum Wanted {
    /// Closed loop: `gather` completions (or one, without `min_wait`).
    Gather,
    /// Any completion.
    One,
    /// None: open loop, the schedule's next wake-up.
    Timeout,
}

/// The most completions a wait asks for, sends' included. Beyond 64
/// connections the sends count toward the 64 again, so the wait is what it
/// was before sends were counted at all: asking for 64 responses besides
/// them, tried by hand at `-c 1000`, did no better and possibly worse.
const MOST_AWAITED: usize = 64;

impl<'a> UringLoop<'a> {
    pub fn new(cfg: &'a LoadConfig, batch: &'a [u8], share: Share, rec: Recorder) -> io::Result<UringLoop<'a>> {
        let most = share.max_connections.max(share.connections);
        let entries = (most * 2).next_power_of_two().clamp(64, 4096) as u32;
        let ring = uring_bufs::new_ring(entries)?;
        // Enough buffers for a few responses' worth per connection in one batch;
        // at most 8 MiB a thread (1,000 connections must fit in 32 MiB).
        let bufs = BufRing::new(&ring, (most * 4).next_power_of_two().clamp(64, 512) as u16, BUF_SIZE)?;
        // Sockets go into the ring's own file table, slot = connection index:
        // an operation on a registered file skips the lookup and reference
        // count of the process's file table (`fget`/`fput`, about 1.5% here).
        ring.submitter().register_files_sparse(most as u32)?;
        if share.rate.is_some() {
            // The ring's wait timeout is the open loop's timer.
            crate::core::pacer::fine_timer_slack();
        }
        // SAFETY: msghdr is plain data; all zeroes is an empty header.
        let mut msghdr: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
        msghdr.msg_controllen = rx_time::CONTROL_LEN as _;
        let gather =
            (share.rate.is_none() && ring.params().is_feature_min_timeout()).then_some(gather_for(share.connections));
        Ok(UringLoop {
            cycle: CycleState::new(cfg, share, rec, batch.len() / cfg.protocol.pipeline().max(1)),
            batch,
            ring,
            bufs,
            gens: vec![0; most],
            in_flight_ops: 0,
            rearm: Vec::new(),
            completions: Vec::with_capacity(entries as usize * 4),
            queued: Vec::with_capacity(most),
            msghdr,
            gather,
            sends_in_flight: 0,
        })
    }

    pub fn run(mut self) -> Output {
        let start = Instant::now();
        let busy_from = crate::core::rusage::ThreadTime::now();
        self.begin(start);
        loop {
            let now = Instant::now();
            let (wake, want) = self.plan(now);
            self.stamp_queued();
            if !self.wait(wake.saturating_duration_since(now), want) {
                break;
            }
            let clocks = Clocks::read();
            self.reap(clocks);
            if self.end_batch(clocks.now()) {
                break;
            }
        }
        self.shut_down();
        let UringLoop { cycle, ring, bufs, .. } = self;
        drop(ring); // before the buffers it may still name
        drop(bufs);
        cycle.finish(start, busy_from)
    }

    /// Handles every completion the ring holds, gives their buffers back in
    /// one publish, and arms again the receives that ended on live sockets.
    fn reap(&mut self, clocks: Clocks) {
        self.completions.clear();
        self.completions.extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
        for k in 0..self.completions.len() {
            let (data, res, flags) = self.completions[k];
            self.on_completion(data, res, flags, clocks);
        }
        self.bufs.publish();
        while let Some((i, gen)) = self.rearm.pop() {
            if gen == self.gens[i as usize] {
                self.arm_recv(i as usize);
            }
        }
    }

    /// Requests queued in this batch go out at the next submit: their send
    /// time is taken now, once, rather than when each was queued, which is
    /// both closer to the truth and one clock read per batch instead of one
    /// per request.
    fn stamp_queued(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let t = Instant::now();
        let closed = !self.cycle.sched.open_loop();
        let cycle = &mut self.cycle;
        for &i in &self.queued {
            let c = &mut cycle.conns[i as usize];
            c.start = t;
            if closed {
                // Closed loop: the send time is when the request counts.
                cycle.rec.restamp(u64::from(c.batch), c.intended, t);
                c.intended = t;
            }
        }
        self.queued.clear();
    }

    /// Until when the next wait may last, and what ends it sooner. Open
    /// loop, nothing does until the schedule's next wake-up
    /// (`CycleState::scheduled_wake`) unless due requests wait for a connection or
    /// the schedule is over: then any completion does.
    fn plan(&self, now: Instant) -> (Instant, Wanted) {
        let deadline = self.cycle.deadline();
        if !self.cycle.sched.open_loop() {
            return (deadline, Wanted::Gather);
        }
        match self.cycle.scheduled_wake(now) {
            Some(wake) => (wake, Wanted::Timeout),
            None => (deadline, Wanted::One),
        }
    }

    /// Submits what is queued and waits up to `timeout` for what `want`
    /// asks. False when the ring itself failed.
    fn wait(&mut self, timeout: Duration, want: Wanted) -> bool {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        let (want, args) = match (want, self.gather) {
            // With nothing to gather (one response), no `min_wait`: its
            // timer would end the wait on the sends' completions alone 20 us
            // in (an extra wake-up per request at `-c 1`, and a round trip
            // slower than wrk's).
            (Wanted::Gather, Some(n)) => {
                let args = if n > 1 { args.min_wait_usec(GATHER_US) } else { args };
                ((n + self.sends_in_flight).min(MOST_AWAITED), args)
            }
            // More than the queue can hold: only the timeout ends the wait.
            (Wanted::Timeout, _) => (self.ring.params().cq_entries() as usize + 1, args),
            // The sends' completions, already there, would end it at once.
            (Wanted::One, _) if self.cycle.sched.open_loop() && !self.cycle.stopping => {
                (self.sends_in_flight + 1, args)
            }
            _ => (1, args),
        };
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => true,
            Err(e) => matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)),
        }
    }

    fn push(&mut self, sqe: squeue::Entry) {
        self.in_flight_ops += 1;
        // SAFETY: every buffer an entry points at (the request bytes, the
        // provided buffers) lives as long as the worker, and so the ring.
        while unsafe { self.ring.submission().push(&sqe) }.is_err() {
            // A full queue is submitted now: what it sends goes out now.
            self.stamp_queued();
            if self.ring.submit().is_err() {
                break;
            }
        }
    }

    fn on_completion(&mut self, data: u64, res: i32, flags: u32, clocks: Clocks) {
        let now = clocks.now();
        let (kind, gen, i) = untag(data);
        let more = kind == RECV && cqueue::more(flags);
        if !more {
            self.in_flight_ops -= 1;
        }
        if kind == SEND {
            self.sends_in_flight -= 1;
        }
        let buffer = cqueue::buffer_select(flags);
        let current = gen == self.gens[i] && self.cycle.conns[i].stream.is_some();
        match kind {
            RECV if current => {
                if res > 0 {
                    let id = buffer.expect("a receive with data names its buffer");
                    let filled: *const [u8] = self.bufs.get(id, res as usize);
                    // SAFETY: the buffer is ours until it is given back below,
                    // and the ring's memory lives as long as the worker.
                    let parsed = types::RecvMsgOut::parse(unsafe { &*filled }, &self.msghdr)
                        .map(|out| (out.payload_data() as *const [u8], rx_time::of_control(out.control_data())));
                    match parsed {
                        Ok((payload, rx)) if !unsafe { &*payload }.is_empty() => {
                            let at = clocks.place(rx, self.cycle.conns[i].start);
                            // SAFETY: as above; the payload is inside the buffer.
                            self.received(i, unsafe { &*payload }, at);
                        }
                        Ok(_) if !more => self.eof(i, now),
                        Ok(_) => {}
                        Err(()) => self.fail(i, ErrorKind::Read, now),
                    }
                } else if res == 0 {
                    self.eof(i, now);
                } else if peer_gone(-res) {
                    self.peer_closed(i, ErrorKind::Read, now);
                } else if res != -libc::ENOBUFS {
                    self.fail(i, ErrorKind::Read, now);
                }
                // The receive ended with the socket still ours (no buffer free,
                // or the kernel's own limit): arm it again after this batch.
                if !more && gen == self.gens[i] && self.cycle.conns[i].stream.is_some() {
                    self.rearm.push((i as u32, gen));
                }
            }
            SEND if current => self.on_sent(i, res, now),
            CONNECT if current => self.on_connected(i, now),
            _ => {}
        }
        if let Some(id) = buffer {
            self.bufs.give_back(id);
        }
    }

    fn on_connected(&mut self, i: usize, now: Instant) {
        match self.cycle.conns[i].finish_connect() {
            Ok(true) => {
                self.arm_recv(i);
                self.ready(i, now);
            }
            Ok(false) => self.poll_connect(i),
            Err(_) => {
                self.cycle.rec.error(ErrorKind::Connect, now, None);
                self.close(i);
            }
        }
    }

    fn on_sent(&mut self, i: usize, res: i32, now: Instant) {
        let ConnState::Writing(off) = self.cycle.conns[i].state else { return };
        if res < 0 && peer_gone(-res) {
            return self.peer_closed(i, ErrorKind::Write, now);
        }
        if res < 0 {
            return self.fail(i, ErrorKind::Write, now);
        }
        let off = off + res as usize;
        if off < self.cycle.batch_bytes(i) {
            self.send_from(i, off);
        } else {
            self.cycle.conns[i].state = ConnState::Reading;
        }
    }

    /// The connection's slot in the ring's file table, while it has a socket.
    fn fixed(&self, i: usize) -> Option<types::Fixed> {
        self.cycle.conns[i].stream.as_ref().map(|_| types::Fixed(i as u32))
    }

    fn arm_recv(&mut self, i: usize) {
        let Some(fd) = self.fixed(i) else { return };
        let msghdr: *const libc::msghdr = &*self.msghdr;
        self.push(opcode::RecvMsgMulti::new(fd, msghdr, GROUP).build().user_data(tag(RECV, self.gens[i], i)));
    }

    fn poll_connect(&mut self, i: usize) {
        let Some(fd) = self.fixed(i) else { return };
        self.push(opcode::PollAdd::new(fd, libc::POLLOUT as u32).build().user_data(tag(CONNECT, self.gens[i], i)));
    }

    /// Queues the rest of the request batch from byte `off`; the connection
    /// stays `Writing` until the kernel says all of it went.
    fn send_from(&mut self, i: usize, off: usize) {
        let len = self.cycle.batch_bytes(i);
        let Some(fd) = self.fixed(i) else { return };
        // A mix gives each connection its own batch; it is not touched
        // again until the connection is idle, so it outlives the send.
        let bytes = match self.cycle.picker {
            Some(_) => &self.cycle.conns[i].out[off..len],
            None => &self.batch[off..len],
        };
        let (ptr, n) = (bytes.as_ptr(), bytes.len());
        self.cycle.conns[i].state = ConnState::Writing(off);
        self.sends_in_flight += 1;
        let sqe = opcode::Send::new(fd, ptr, n as u32).flags(libc::MSG_NOSIGNAL).build().user_data(tag(
            SEND,
            self.gens[i],
            i,
        ));
        self.push(sqe);
    }

    /// Ends the connection's socket: a shutdown first, so that the receive
    /// still armed on it completes and the kernel lets the socket go.
    fn close(&mut self, i: usize) {
        if let Some(s) = self.cycle.conns[i].stream.as_ref() {
            // An entry still queued names the socket by its slot, and the
            // slot is resolved when the entry is submitted: submitted after
            // the slot is given to a new socket, the rest of the old
            // request would go out on the new connection. Submitting now
            // binds every queued entry to the socket it was meant for.
            if !self.ring.submission().is_empty() {
                let _ = self.ring.submit();
            }
            let _ = s.shutdown(Shutdown::Both);
            // The table holds its own reference: release it, or the socket
            // would outlive its close.
            let _ = self.ring.submitter().register_files_update(i as u32, &[-1]);
        }
        self.gens[i] = self.gens[i].wrapping_add(1) & 0x3fff_ffff;
        self.cycle.conns[i].close();
    }

    /// Shuts every socket and waits (briefly) until the kernel has finished
    /// with every operation, so no receive can write into a buffer after the
    /// ring's memory is freed.
    fn shut_down(&mut self) {
        self.cycle.stopping = true;
        for i in 0..self.cycle.conns.len() {
            self.close(i);
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while self.in_flight_ops > 0 && Instant::now() < deadline {
            if !self.wait(Duration::from_millis(50), Wanted::One) {
                break;
            }
            // Every socket is closed: completions only return buffers and
            // count down what is in flight.
            self.reap(Clocks::read());
        }
        self.bufs.unregister(&self.ring);
    }
}

impl<'a> Cycle<'a> for UringLoop<'a> {
    type Stream = TcpStream;

    fn cycle(&mut self) -> &mut CycleState<'a, TcpStream> {
        &mut self.cycle
    }

    fn cycle_ref(&self) -> &CycleState<'a, TcpStream> {
        &self.cycle
    }

    fn tick_parts(&mut self) -> Parts<'_> {
        self.cycle.parts()
    }

    fn open(&mut self, i: usize, now: Instant) {
        self.close(i);
        if self.cycle.stopping {
            return;
        }
        match self.cycle.conns[i].connect(self.cycle.cfg.target.addr, now) {
            Ok(stream) => {
                // Without receive times (an old kernel) responses are
                // stamped when handled, as before.
                let _ = rx_time::enable(stream.as_raw_fd());
                if self.ring.submitter().register_files_update(i as u32, &[stream.as_raw_fd()]).is_err() {
                    self.cycle.rec.error(ErrorKind::Connect, now, None);
                    return;
                }
                self.cycle.conns[i].stream = Some(stream);
                self.cycle.conns[i].state = ConnState::Connecting;
                self.poll_connect(i);
            }
            Err(_) => {
                self.cycle.rec.error(ErrorKind::Connect, now, None);
            }
        }
    }

    fn write_request(&mut self, i: usize) {
        self.queued.push(i as u32);
        self.send_from(i, 0);
    }

    /// The batch's time; `stamp_queued` replaces it just before the submit.
    fn send_time(&self, now: Instant) -> Instant {
        now
    }
}

#[cfg(test)]
mod tests {
    use super::gather_for;

    #[test]
    fn a_closed_loop_wait_leaves_the_server_requests_to_work_on() {
        // Up to four connections: every response is handled as it comes.
        assert_eq!([1, 2, 4].map(gather_for), [1, 1, 1]);
        // Then all but half, at most eight, stay queued at the server.
        assert_eq!([8, 16, 32, 64].map(gather_for), [4, 8, 24, 56]);
        assert_eq!(gather_for(1000), 64);
    }
}
