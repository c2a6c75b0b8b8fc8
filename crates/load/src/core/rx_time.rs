//! When a response reached this machine, not when the load generator got to
//! it: the kernel's receive timestamp of each read (`SO_TIMESTAMPNS`, taken
//! as the packet enters the network stack, CLOCK_REALTIME), carried in the
//! control data of io_uring's multishot `recvmsg`.
//!
//! Stamping a response when its completion is handled adds the generator's
//! own delay (the time to wake up, or to work through the rest of a batch)
//! to every latency it records; with the kernel's time it does not. That
//! also lets the io_uring loop wait for several completions before waking
//! (`http1/uring.rs`), which costs the server nothing and no longer costs
//! the measurement anything either. `std`'s `Instant` is CLOCK_MONOTONIC, so
//! a receive time is placed on it by the distance between the two clocks,
//! read together once per batch. The pair is read between two `Instant`
//! readings and read again when those are far apart (the thread was
//! preempted between them: a fresh-clone CI run on a loaded machine saw a
//! latency of 0 from such a pair). A time that still lands before its
//! request's send cannot be right, and the loop's own reading is used
//! instead, as without a receive time.

use std::time::{Duration, Instant};

/// Closed loop: once a response is waiting, how much longer a thread may let
/// others gather before it handles them (io_uring's `min_wait`, the HTTP/2
/// loop's pause). Latencies do not include it (they end at the kernel's
/// receive time); only the next request's send waits, while the server
/// still has the other connections' or streams' requests to work on.
pub const GATHER_US: u32 = 20;

/// Room for one `SCM_TIMESTAMPNS` control message (`CMSG_SPACE(16)`).
pub const CONTROL_LEN: usize = 32;

/// Asks the kernel to timestamp what `fd` receives.
pub fn enable(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid option value of the right size for a socket we own.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `recv` on a socket with stamping on: the bytes read, and the kernel's
/// receive time of the last segment they came from. Made with `syscall(2)`
/// as the cleartext `recvfrom` is (`core/transport.rs`): glibc's wrapper toggles
/// thread cancellation around every call.
pub fn recv(fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<(usize, Option<i128>)> {
    let mut control = [0u64; CONTROL_LEN / 8];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: msghdr is plain data; its pointers name the buffers above.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_LEN as _;
    // SAFETY: a socket we own and a msghdr whose buffers outlive the call.
    let n = unsafe { libc::syscall(libc::SYS_recvmsg, fd, &mut msg as *mut libc::msghdr, 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the control area is CONTROL_LEN initialised bytes.
    let bytes = unsafe { std::slice::from_raw_parts(control.as_ptr().cast::<u8>(), CONTROL_LEN) };
    let len = (msg.msg_controllen as usize).min(CONTROL_LEN);
    Ok((n as usize, of_control(&bytes[..len])))
}

/// The receive time in a `recvmsg` control area, as nanoseconds of
/// CLOCK_REALTIME; `None` when it holds none.
pub fn of_control(control: &[u8]) -> Option<i128> {
    control_messages(control).find_map(|(level, kind, data)| {
        if level != libc::SOL_SOCKET || kind != libc::SCM_TIMESTAMPNS || data.len() < 16 {
            return None;
        }
        let sec = i64::from_ne_bytes(data[0..8].try_into().ok()?);
        let nsec = i64::from_ne_bytes(data[8..16].try_into().ok()?);
        (sec > 0).then_some(sec as i128 * 1_000_000_000 + nsec as i128)
    })
}

/// The control messages of a `recvmsg` control area: level, type and data
/// of each. cmsghdr on 64-bit Linux: len (usize), level (i32), type (i32),
/// then the data, 8-byte aligned; walked by hand because the control area
/// may be a slice of the kernel's buffer (io_uring's), not a msghdr
/// `CMSG_FIRSTHDR` could walk. A malformed length ends the walk.
pub fn control_messages(control: &[u8]) -> impl Iterator<Item = (i32, i32, &[u8])> {
    let mut off = 0;
    std::iter::from_fn(move || {
        if off + 16 > control.len() {
            return None;
        }
        let len = usize::from_ne_bytes(control[off..off + 8].try_into().ok()?);
        let level = i32::from_ne_bytes(control[off + 8..off + 12].try_into().ok()?);
        let kind = i32::from_ne_bytes(control[off + 12..off + 16].try_into().ok()?);
        if len < 16 || off + len > control.len() {
            return None;
        }
        let data = &control[off + 16..off + len];
        off += (len + 7) & !7;
        Some((level, kind, data))
    })
}

/// CLOCK_REALTIME and `Instant` read together, to place receive times on `Instant`.
#[derive(Clone, Copy)]
pub struct Clocks {
    now: Instant,
    real_ns: i128,
}

/// How far apart the two `Instant` readings around a wall-clock reading may
/// be: a vDSO clock read takes tens of nanoseconds, so a wider gap means the
/// thread was preempted in between and the pair is not simultaneous.
const PAIR_SPREAD: Duration = Duration::from_micros(2);

impl Clocks {
    /// The two clocks, read as nearly together as a few tries allow (the
    /// tightest pair is kept).
    pub fn read() -> Clocks {
        let mut best: Option<(Duration, Clocks)> = None;
        for _ in 0..4 {
            let before = Instant::now();
            let real_ns = real_now_ns();
            let after = Instant::now();
            let spread = after - before;
            let pair = Clocks { now: before + spread / 2, real_ns };
            if spread <= PAIR_SPREAD {
                return pair;
            }
            if best.is_none_or(|(s, _)| spread < s) {
                best = Some((spread, pair));
            }
        }
        best.expect("at least one try").1
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    /// `real_ns` on the `Instant` clock, never later than the reading. A
    /// time before `floor` (the request's send) cannot be true (a step of
    /// the wall clock, or a pair read apart): the reading is used then, as
    /// it is without a time.
    pub fn place(&self, real_ns: Option<i128>, floor: Instant) -> Instant {
        let Some(real_ns) = real_ns else { return self.now };
        let ago = (self.real_ns - real_ns).max(0);
        match self.now.checked_sub(Duration::from_nanos(ago.min(u64::MAX as i128) as u64)) {
            Some(t) if t >= floor => t,
            _ => self.now,
        }
    }
}

fn real_now_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmsg(level: i32, kind: i32, sec: i64, nsec: i64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&32usize.to_ne_bytes());
        b.extend_from_slice(&level.to_ne_bytes());
        b.extend_from_slice(&kind.to_ne_bytes());
        b.extend_from_slice(&sec.to_ne_bytes());
        b.extend_from_slice(&nsec.to_ne_bytes());
        b
    }

    #[test]
    fn the_timestamp_is_found_and_other_messages_are_skipped() {
        assert_eq!(of_control(&cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, 5, 7)), Some(5_000_000_007));
        let mut two = cmsg(libc::IPPROTO_IP, 1, 9, 9);
        two.extend(cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, 1, 2));
        assert_eq!(of_control(&two), Some(1_000_000_002));
        assert_eq!(of_control(&[0; CONTROL_LEN]), None, "an empty control area holds no time");
        assert_eq!(of_control(&cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, 0, 0)), None);
    }

    /// The kernel really stamps what a TCP socket receives, and `recv` (the
    /// HTTP/2 and TLS reads) finds the stamp where `recvmsg` puts it.
    #[test]
    fn a_tcp_read_carries_its_receive_time() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        enable(client.as_raw_fd()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        // The kernel turns stamping on for the whole host asynchronously
        // (a deferred static-key switch) the first time any socket asks, so
        // the first reads after `enable` may carry no time: try a few.
        let mut stamped = None;
        for _ in 0..10 {
            let before = Clocks::read();
            server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
            std::thread::sleep(Duration::from_millis(20));
            let mut data = [0u8; 64];
            let (n, rx) = recv(client.as_raw_fd(), &mut data).unwrap();
            let after = Clocks::read();
            assert_eq!(n, 19);
            if let Some(rx) = rx {
                stamped = Some((before, rx, after));
                break;
            }
        }
        let (before, rx, after) = stamped.expect("a receive time within 10 reads");
        assert!(before.real_ns <= rx && rx <= after.real_ns, "{} <= {rx} <= {}", before.real_ns, after.real_ns);
        let at = after.place(Some(rx), before.now());
        assert!(after.now() - at >= Duration::from_millis(15), "the read came 20 ms after the arrival");
    }

    #[test]
    fn a_receive_time_lands_between_the_send_and_the_reading() {
        let clocks = Clocks::read();
        let sent = clocks.now() - Duration::from_millis(10);
        let at = clocks.place(Some(clocks.real_ns - 3_000_000), sent);
        assert_eq!(clocks.now() - at, Duration::from_millis(3));
        let before_send = clocks.place(Some(clocks.real_ns - 50_000_000), sent);
        assert_eq!(before_send, clocks.now(), "a time before the send is not believed: the reading is used");
        assert_eq!(clocks.place(Some(clocks.real_ns + 1_000), sent), clocks.now(), "never after the reading");
        assert_eq!(clocks.place(None, sent), clocks.now());
    }
}
