//! The drop counter of the server's own listen sockets: what `ss -ltm` shows
//! as `d<N>`, the listener's `sk_drops`, which the kernel raises for every
//! SYN or connection it drops because that listener's accept queue (or SYN
//! queue) was full (`tcp_listendrop`). The host's `ListenOverflows` and
//! `ListenDrops` (net_drops.rs) count every listener in the namespace, so on
//! a shared machine another program's backlog-1 socket would be blamed on
//! the server; this counter is the server's alone.
//!
//! It is read through `sock_diag` (netlink `NETLINK_SOCK_DIAG`, an
//! `inet_diag_req_v2` dump of TCP sockets in LISTEN with the
//! `INET_DIAG_SKMEMINFO` extension, whose `SK_MEMINFO_DROPS` slot is
//! `sk_drops`), as `ss` does. The messages are a fixed kernel ABI of a few
//! structs; a netlink crate would bring a whole route-protocol stack for
//! these 80 lines. The dump is of the namespace the reader runs in: a local
//! server's, or the agent's on the server's host. Every listener on the
//! server's port is summed (workers sharing it with `SO_REUSEPORT`).
//!
//! `sk_drops` also counts packets a listener drops on purpose: with
//! `TCP_DEFER_ACCEPT` (fasthttp's `reuseport.Listen`, nginx's `deferred`)
//! the kernel discards each handshake's bare ACK and waits for data, raising
//! `sk_drops` once per connection with nothing lost (`TcpExt:
//! TCPDeferAcceptDrop`). A real queue drop raises the namespace's
//! `ListenDrops` too, a deferred ACK does not: [`Reading::since`] takes the
//! smaller rise of the two, so neither another listener's drops nor a
//! deferred accept is blamed on the server.

use std::io;

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const TCP_LISTEN: u32 = 10;
const INET_DIAG_SKMEMINFO: u16 = 7;
const SK_MEMINFO_DROPS: usize = 8;
/// `struct nlmsghdr`.
const NLMSG_HDR: usize = 16;
/// `struct inet_diag_msg`: family, state, timer, retrans, the 48-byte
/// `inet_diag_sockid`, expires, rqueue, wqueue, uid, inode.
const DIAG_MSG: usize = 72;

/// The listener's counter and its namespace's `ListenDrops`, read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub listener: u64,
    /// `None` where `/proc/self/net/netstat` cannot be read.
    pub namespace: Option<u64>,
}

impl Reading {
    /// The connection attempts the listener dropped for a full queue since
    /// `earlier`: its own drops, at most as many as its namespace counted.
    pub fn since(&self, earlier: &Reading) -> u64 {
        let own = self.listener.saturating_sub(earlier.listener);
        match (self.namespace, earlier.namespace) {
            (Some(now), Some(then)) => own.min(now.saturating_sub(then)),
            _ => own,
        }
    }
}

/// [`read`] beside the namespace's `ListenDrops`; `None` as for [`read`].
pub fn reading(port: u16) -> Option<Reading> {
    let listener = read(port)?;
    let namespace = std::fs::read("/proc/self/net/netstat")
        .ok()
        .and_then(|text| crate::net_drops::counter(&text, "TcpExt:", "ListenDrops"));
    Some(Reading { listener, namespace })
}

/// The summed `sk_drops` of the TCP listeners (IPv4 and IPv6) on `port` in
/// this network namespace; `None` when sock_diag cannot be asked or no
/// listener is on that port (then nothing is known, and nothing is blamed).
pub fn read(port: u16) -> Option<u64> {
    let mut found = None;
    for family in [libc::AF_INET, libc::AF_INET6] {
        if let Some(drops) = dump(family as u8, port).ok().flatten() {
            found = Some(found.unwrap_or(0) + drops);
        }
    }
    found
}

/// One family's listeners on `port`: their drops summed, `None` when there is none.
fn dump(family: u8, port: u16) -> io::Result<Option<u64>> {
    // SAFETY: plain socket creation; the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, NETLINK_SOCK_DIAG) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is closed once, when this drops.
    let _socket = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let request = request(family);
    // SAFETY: the buffer is valid for its length; the kernel is the
    // default destination of a netlink socket.
    if unsafe { libc::send(fd, request.as_ptr().cast(), request.len(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 32 * 1024];
    let mut total: Option<u64> = None;
    loop {
        // SAFETY: recv writes at most buf.len() bytes into buf.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        match replies(&buf[..n as usize], port) {
            Reply::More(drops) => total = add(total, drops),
            Reply::Done(drops) => return Ok(add(total, drops)),
            Reply::Failed => return Err(io::Error::other("sock_diag refused the dump")),
        }
    }
}

fn add(total: Option<u64>, more: Option<u64>) -> Option<u64> {
    match (total, more) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

/// A dump request for `family`'s TCP listeners with their memory counters.
fn request(family: u8) -> Vec<u8> {
    let len = NLMSG_HDR + 56;
    let mut msg = Vec::with_capacity(len);
    msg.extend_from_slice(&(len as u32).to_ne_bytes());
    msg.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    msg.extend_from_slice(&[0; 8]); // sequence, port id
                                    // inet_diag_req_v2: family, protocol, extensions, pad, states, sockid.
    msg.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 1 << (INET_DIAG_SKMEMINFO - 1), 0]);
    msg.extend_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    msg.resize(len, 0);
    msg
}

enum Reply {
    More(Option<u64>),
    Done(Option<u64>),
    Failed,
}

/// The drops of the listeners on `port` among one datagram's messages.
fn replies(mut data: &[u8], port: u16) -> Reply {
    let mut drops = None;
    while data.len() >= NLMSG_HDR {
        let len = u32::from_ne_bytes(data[0..4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes(data[4..6].try_into().unwrap());
        if len < NLMSG_HDR || len > data.len() {
            return Reply::Failed;
        }
        match kind {
            NLMSG_DONE => return Reply::Done(drops),
            NLMSG_ERROR => return Reply::Failed,
            _ => {
                if let Some(d) = listener_drops(&data[NLMSG_HDR..len], port) {
                    drops = Some(drops.unwrap_or(0) + d);
                }
            }
        }
        data = &data[align(len).min(data.len())..];
    }
    Reply::More(drops)
}

/// The `sk_drops` of one `inet_diag_msg` when its local port is `port`.
fn listener_drops(msg: &[u8], port: u16) -> Option<u64> {
    if msg.len() < DIAG_MSG || u16::from_be_bytes([msg[4], msg[5]]) != port {
        return None;
    }
    let mut attrs = &msg[DIAG_MSG..];
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]);
        if len < 4 || len > attrs.len() {
            return None;
        }
        if kind == INET_DIAG_SKMEMINFO {
            let at = 4 + SK_MEMINFO_DROPS * 4;
            let value = attrs.get(at..at + 4)?;
            return Some(u32::from_ne_bytes(value.try_into().ok()?) as u64);
        }
        attrs = &attrs[align(len).min(attrs.len())..];
    }
    None
}

/// Netlink's 4-byte alignment of messages and attributes.
fn align(len: usize) -> usize {
    (len + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpListener, TcpStream};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::time::Duration;

    /// A loopback listener with a backlog of `backlog` that never accepts.
    fn listener(backlog: i32) -> (OwnedFd, u16) {
        // SAFETY: plain socket calls on a descriptor owned by the result.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0);
            let owned = OwnedFd::from_raw_fd(fd);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            assert_eq!(libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len), 0);
            assert_eq!(libc::listen(fd, backlog), 0);
            let mut bound: libc::sockaddr_in = std::mem::zeroed();
            let mut blen = len;
            assert_eq!(libc::getsockname(fd, (&mut bound as *mut libc::sockaddr_in).cast(), &mut blen), 0);
            (owned, u16::from_be(bound.sin_port))
        }
    }

    #[test]
    fn an_overflowing_listener_counts_its_own_drops_and_a_quiet_one_none() {
        let healthy = TcpListener::bind("127.0.0.1:0").unwrap();
        let healthy_port = healthy.local_addr().unwrap().port();
        let (_flooded, port) = listener(0);
        assert_eq!(read(port), Some(0), "a new listener has dropped nothing");
        let start_ns = reading(port).unwrap().namespace;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        // Nothing accepts: past the backlog every SYN is dropped by this listener.
        let kept: Vec<TcpStream> =
            (0..8).filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(50)).ok()).collect();
        let drops = read(port).expect("the flooded listener is found");
        assert!(drops > 0, "no drops counted on a listener that never accepts ({} connected)", kept.len());
        let queue = reading(port).unwrap().since(&Reading { listener: 0, namespace: start_ns });
        assert!(queue > 0, "a full queue is the server's: the namespace counted its drops too");
        assert_eq!(read(healthy_port), Some(0), "another program's overflow is not this listener's");
        drop(healthy);
        assert_eq!(read(healthy_port), None, "no listener on the port: nothing known");
    }

    /// A loopback listener that defers accepting until data arrives.
    fn deferring_listener() -> (OwnedFd, u16) {
        let (fd, port) = listener(128);
        let secs: libc::c_int = 5;
        // SAFETY: setsockopt with a valid descriptor and an int option.
        let set = unsafe {
            use std::os::fd::AsRawFd;
            let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_DEFER_ACCEPT,
                (&secs as *const libc::c_int).cast(),
                len,
            )
        };
        assert_eq!(set, 0);
        (fd, port)
    }

    #[test]
    fn deferred_accepts_raise_the_listeners_drops_but_are_not_queue_drops() {
        let (_deferring, port) = deferring_listener();
        let start = reading(port).expect("the listener is found");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let kept: Vec<TcpStream> = (0..5).filter_map(|_| TcpStream::connect(addr).ok()).collect();
        assert_eq!(kept.len(), 5, "a deferring listener with room completes every handshake");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut now = reading(port).unwrap();
        while now.listener == start.listener && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            now = reading(port).unwrap();
        }
        assert!(now.listener > start.listener, "the kernel dropped the bare ACKs on the listener (sk_drops)");
        assert_eq!(now.since(&start), 0, "no connection was lost: nothing to blame on the server");
    }

    #[test]
    fn a_rise_counts_up_to_what_the_namespace_counted() {
        let at = |listener, namespace| Reading { listener, namespace };
        assert_eq!(at(70, Some(100)).since(&at(5, Some(100))), 0, "deferred ACKs only");
        assert_eq!(at(70, Some(165)).since(&at(5, Some(100))), 65, "a full queue raises both");
        assert_eq!(at(70, Some(900)).since(&at(5, Some(100))), 65, "others' drops are not the server's");
        assert_eq!(at(70, None).since(&at(5, None)), 65, "without the namespace's counter, the listener's");
    }

    #[test]
    fn a_reply_is_parsed_by_port_and_a_truncated_one_is_refused() {
        let mut msg = vec![0u8; DIAG_MSG];
        msg[4..6].copy_from_slice(&8080u16.to_be_bytes());
        let mut attr = vec![0u8; 4 + 9 * 4];
        let len = attr.len() as u16;
        attr[0..2].copy_from_slice(&len.to_ne_bytes());
        attr[2..4].copy_from_slice(&INET_DIAG_SKMEMINFO.to_ne_bytes());
        attr[4 + 32..4 + 36].copy_from_slice(&686u32.to_ne_bytes());
        msg.extend_from_slice(&attr);
        assert_eq!(listener_drops(&msg, 8080), Some(686));
        assert_eq!(listener_drops(&msg, 8081), None);
        assert_eq!(listener_drops(&msg[..DIAG_MSG + 10], 8080), None);
    }
}
