//! A load thread's one UDP socket for all its HTTP/3 connections, moving
//! datagrams in batches: `quinn-udp` sends a train of same-sized packets as
//! one GSO `sendmsg` (the kernel splits it) and receives with `recvmmsg`
//! and GRO (the kernel hands back coalesced segments), where the kernel
//! allows each; it falls back to one datagram a call where not. The socket
//! is non-blocking, registered once with the thread's mio poll; a send the
//! kernel has no room for is kept and sent first when the socket is
//! writable again, so a burst costs a wait, not a lost packet.
//!
//! Receiving is written here rather than left to `quinn-udp`, for one
//! thing it does not give: the kernel's receive time of each datagram
//! (`SO_TIMESTAMPNS`, as the TCP engines take it, `rx_time`). With it a
//! response ends when it reached the machine, so the open loop can sleep
//! through responses to its schedule's next wake-up and read them then,
//! one wake-up and one `recvmmsg` where there were several, without the
//! wait entering any latency. GRO's segment size is read from the same
//! control data; ECN and the destination address are not asked for (the
//! client sends without ECN, and has one address).

use bytes::BytesMut;
use mio::net::UdpSocket;
use quinn_udp::{Transmit, UdpSocketState};
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;

/// One GRO receive holds up to 64 segments of one datagram size.
const RECV_BUF: usize = 64 * 1024;
/// Messages one `recvmmsg` takes.
const BATCH: usize = 8;
/// Room for the control messages `quinn-udp`'s socket options and ours ask
/// for (packet info, TOS, GRO size, receive time), each `CMSG_SPACE` apart.
const CONTROL: usize = 256;
/// `UDP_GRO` (linux/udp.h), as `quinn-udp` spells it where libc lacks it.
const UDP_GRO: i32 = 104;

pub struct Udp {
    pub socket: UdpSocket,
    state: UdpSocketState,
    bufs: Vec<Box<[u8]>>,
    control: Box<[[u64; CONTROL / 8]; BATCH]>,
    names: Box<[libc::sockaddr_storage; BATCH]>,
    /// A send that met a full socket buffer: its bytes, destination and segment size.
    blocked: Option<(Vec<u8>, SocketAddr, Option<usize>)>,
}

/// One received datagram.
pub struct Datagram {
    pub from: SocketAddr,
    pub data: BytesMut,
    /// When the kernel received it (CLOCK_REALTIME ns), if it said.
    pub received: Option<i128>,
}

impl Udp {
    /// A socket of the same address family as `peer`, on an ephemeral port.
    pub fn new(peer: SocketAddr) -> io::Result<Udp> {
        let local: SocketAddr = match peer {
            SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(local)?;
        let state = UdpSocketState::new((&socket).into())?;
        // Room for a burst of every connection's packets between two wake-ups.
        let _ = state.set_recv_buffer_size((&socket).into(), 4 << 20);
        let _ = state.set_send_buffer_size((&socket).into(), 4 << 20);
        // Without stamping, datagrams end when read, as before.
        let _ = crate::core::rx_time::enable(socket.as_raw_fd());
        Ok(Udp {
            socket,
            state,
            bufs: (0..BATCH).map(|_| vec![0u8; RECV_BUF].into_boxed_slice()).collect(),
            control: Box::new([[0; CONTROL / 8]; BATCH]),
            // SAFETY: sockaddr_storage is plain data; all zeroes is a valid value.
            names: Box::new(unsafe { std::mem::zeroed() }),
            blocked: None,
        })
    }

    /// How many datagrams one send may carry (1 without GSO).
    pub fn max_segments(&self) -> usize {
        self.state.max_gso_segments()
    }

    /// Whether a send is waiting for room: no more should be queued.
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// Sends `contents` (one datagram, or several of `segment_size` each).
    /// Returns false when the kernel had no room: the bytes are kept.
    pub fn send(&mut self, to: SocketAddr, contents: &[u8], segment_size: Option<usize>) -> bool {
        let t = Transmit { destination: to, ecn: None, contents, segment_size, src_ip: None };
        match self.state.send((&self.socket).into(), &t) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.blocked = Some((contents.to_vec(), to, segment_size));
                false
            }
            // Any other failure is a lost packet, which QUIC recovers.
            _ => true,
        }
    }

    /// The socket is writable: sends what was kept. False if still blocked.
    pub fn unblock(&mut self) -> bool {
        let Some((bytes, to, seg)) = self.blocked.take() else { return true };
        self.send(to, &bytes, seg)
    }

    /// Receives one batch into `out` (cleared first): the total bytes and
    /// whether the batch was full (more may wait), or `WouldBlock` once the
    /// socket is empty. A batch that was not full found the queue empty, so
    /// the caller need not ask again: a datagram arriving later raises a new
    /// readiness edge.
    pub fn recv(&mut self, out: &mut Vec<Datagram>) -> io::Result<(usize, bool)> {
        out.clear();
        // SAFETY: zeroed iovec/mmsghdr are plain data, filled in below.
        let mut iovs: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        for k in 0..BATCH {
            iovs[k] = libc::iovec { iov_base: self.bufs[k].as_mut_ptr().cast(), iov_len: RECV_BUF };
            let h = &mut msgs[k].msg_hdr;
            h.msg_name = (&mut self.names[k] as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as _;
            h.msg_iov = &mut iovs[k];
            h.msg_iovlen = 1;
            h.msg_control = self.control[k].as_mut_ptr().cast();
            h.msg_controllen = CONTROL as _;
        }
        // SAFETY: every pointer names a buffer of this struct or of this
        // frame, each of the length given, alive for the call.
        let n =
            unsafe { libc::recvmmsg(self.socket.as_raw_fd(), msgs.as_mut_ptr(), BATCH as _, 0, std::ptr::null_mut()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        let mut total = 0;
        for (k, m) in msgs.iter().enumerate().take(n) {
            let len = m.msg_len as usize;
            total += len;
            let Some(from) = address(&self.names[k]) else { continue };
            // SAFETY: the control buffer is CONTROL initialised bytes.
            let bytes = unsafe { std::slice::from_raw_parts(self.control[k].as_ptr().cast::<u8>(), CONTROL) };
            let control = &bytes[..m.msg_hdr.msg_controllen.min(CONTROL)];
            let received = crate::core::rx_time::of_control(control);
            let stride = gro_size(control).unwrap_or(len).max(1);
            let mut all = BytesMut::from(&self.bufs[k][..len]);
            while !all.is_empty() {
                let data = all.split_to(stride.min(all.len()));
                out.push(Datagram { from, data, received });
            }
        }
        Ok((total, n == BATCH))
    }
}

/// The segment size of a GRO-coalesced receive, from its control data.
fn gro_size(control: &[u8]) -> Option<usize> {
    crate::core::rx_time::control_messages(control).find_map(|(level, kind, data)| {
        (level == libc::SOL_UDP && kind == UDP_GRO && data.len() >= 4)
            .then(|| i32::from_ne_bytes(data[..4].try_into().unwrap_or_default()) as usize)
    })
}

/// The sender's address `recvmmsg` wrote.
fn address(name: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match name.ss_family as i32 {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let a = unsafe { &*(name as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(a.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let a = unsafe { &*(name as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
            let port = u16::from_be(a.sin6_port);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, port, a.sin6_flowinfo, a.sin6_scope_id)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rx_time::Clocks;
    use std::time::Duration;

    /// Each datagram comes back whole, from its sender, with the kernel's
    /// receive time: the HTTP/3 loop's latencies end there, not at the read.
    #[test]
    fn datagrams_come_back_from_their_sender_with_their_receive_time() {
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut udp = Udp::new(peer.local_addr().unwrap()).unwrap();
        let to = SocketAddr::from((Ipv4Addr::LOCALHOST, udp.socket.local_addr().unwrap().port()));
        let mut out = Vec::new();
        // Stamping is switched on host-wide asynchronously the first time it
        // is asked for (rx_time's TCP test says so), and until it is, UDP
        // stamps a datagram when it is read, not when it arrived (the
        // kernel's `__sock_recv_timestamp` stamps an unstamped one then; a
        // fresh-clone CI met exactly that). So the datagrams are sent again
        // until one carries its arrival: 20 ms before the read.
        let mut arrival = None;
        for k in 0..10u8 {
            let before = Clocks::read();
            peer.send_to(&[k; 100], to).unwrap();
            peer.send_to(&[k; 40], to).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            let (bytes, more) = udp.recv(&mut out).unwrap();
            let after = Clocks::read();
            assert_eq!((bytes, more), (140, false), "two datagrams, a batch not full");
            assert_eq!(out.iter().map(|d| d.data.len()).collect::<Vec<_>>(), [100, 40]);
            assert!(out.iter().all(|d| d.from == peer.local_addr().unwrap() && d.data[0] == k));
            let Some(rx) = out[0].received else { continue };
            let waited = after.now() - after.place(Some(rx), before.now());
            if waited >= Duration::from_millis(15) {
                arrival = Some(waited);
                break;
            }
        }
        assert!(arrival.is_some(), "no datagram in 10 tries carried its arrival time, 20 ms before the read");
        assert!(udp.recv(&mut out).is_err_and(|e| e.kind() == io::ErrorKind::WouldBlock));
    }
}
