//! A load thread's one UDP socket for all its HTTP/3 connections, moving
//! datagrams in batches: `quinn-udp` sends a train of same-sized packets as
//! one GSO `sendmsg` (the kernel splits it) and receives with `recvmmsg`
//! and GRO (the kernel hands back coalesced segments), where the kernel
//! allows each; it falls back to one datagram a call where not. The socket
//! is non-blocking, registered once with the thread's mio poll; a send the
//! kernel has no room for is kept and sent first when the socket is
//! writable again, so a burst costs a wait, not a lost packet.

use bytes::BytesMut;
use mio::net::UdpSocket;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState, BATCH_SIZE};
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};

/// One GRO receive holds up to 64 segments of one datagram size.
const RECV_BUF: usize = 64 * 1024;

pub struct Udp {
    pub socket: UdpSocket,
    state: UdpSocketState,
    bufs: Vec<Box<[u8]>>,
    meta: Vec<RecvMeta>,
    /// A send that met a full socket buffer: its bytes, destination and segment size.
    blocked: Option<(Vec<u8>, SocketAddr, Option<usize>)>,
}

/// One received datagram.
pub struct Datagram {
    pub from: SocketAddr,
    pub to_ip: Option<IpAddr>,
    pub ecn: Option<quinn_proto::EcnCodepoint>,
    pub data: BytesMut,
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
        let batch = BATCH_SIZE.min(8);
        Ok(Udp {
            socket,
            state,
            bufs: (0..batch).map(|_| vec![0u8; RECV_BUF].into_boxed_slice()).collect(),
            meta: vec![RecvMeta::default(); batch],
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

    /// Receives one batch into `out` (cleared first); the total bytes, or
    /// `WouldBlock` once the socket is empty.
    pub fn recv(&mut self, out: &mut Vec<Datagram>) -> io::Result<usize> {
        out.clear();
        let mut slices: Vec<IoSliceMut> = self.bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
        let n = self.state.recv((&self.socket).into(), &mut slices, &mut self.meta)?;
        let mut total = 0;
        for (meta, buf) in self.meta.iter().zip(&self.bufs).take(n) {
            total += meta.len;
            let mut all = BytesMut::from(&buf[..meta.len]);
            while !all.is_empty() {
                let data = all.split_to(meta.stride.min(all.len()));
                let ecn = meta.ecn.and_then(|e| quinn_proto::EcnCodepoint::from_bits(e as u8));
                out.push(Datagram { from: meta.addr, to_ip: meta.dst_ip, ecn, data });
            }
        }
        Ok(total)
    }
}
