//! What the HTTP/1.1 worker needs from a connection's byte stream, so that one
//! event loop drives both cleartext TCP and TLS.
//!
//! The worker is generic over this trait rather than holding an enum or a
//! trait object: the cleartext build of the loop is monomorphic, its
//! `handshake` and `flush` are constants the compiler removes, and a request
//! still costs exactly one `write` and one `read`. TLS (`tls::TlsStream`) pays
//! for what TLS needs and nothing is added to the cleartext path.

use mio::net::TcpStream;
use std::io;
use std::os::fd::AsRawFd;

/// What one readiness event says about a socket's read side. A short read
/// is taken as the socket drained (no read spent on `EAGAIN`), except when
/// the peer's end or an error came in the same edge-triggered event: the
/// read returns the data before the end, and no later event reports the end
/// again, so the loop reads on until it sees it. (Found as an HTTP/2 server
/// that sent GOAWAY and closed at once: one run in five waited out
/// `--timeout` for a connection already closed.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReadSide {
    /// Nothing to read (the event said writable only).
    Quiet,
    Data,
    /// The peer shut its side, or the socket has an error.
    Closed,
}

impl ReadSide {
    pub fn of(ev: &mio::event::Event) -> ReadSide {
        if ev.is_read_closed() || ev.is_error() {
            ReadSide::Closed
        } else if ev.is_readable() {
            ReadSide::Data
        } else {
            ReadSide::Quiet
        }
    }

    pub fn readable(self) -> bool {
        self != ReadSide::Quiet
    }

    /// Whether a read of `n` bytes into a buffer of `cap` leaves the socket
    /// empty, for transport `T`.
    pub fn drained<T: Transport>(self, n: usize, cap: usize) -> bool {
        self != ReadSide::Closed && T::drained(n, cap)
    }
}

pub trait Transport: Sized {
    /// What every connection of a run shares (the TLS client configuration).
    type Shared;

    /// True when `handshake` has work to do after the TCP connect.
    const HANDSHAKE: bool;

    /// Wraps a socket whose non-blocking connect has been started.
    fn wrap(tcp: TcpStream, shared: &Self::Shared) -> io::Result<Self>;

    fn tcp(&self) -> &TcpStream;

    /// Drives the protocol handshake after the TCP connect; `Ok(true)` once
    /// requests can be sent. Never blocks.
    fn handshake(&mut self) -> io::Result<bool>;

    /// Whether the last handshake resumed an earlier session.
    fn resumed(&self) -> bool;

    /// Whether the handshake agreed to HTTP/2 (ALPN `h2`); cleartext
    /// connections use prior knowledge.
    fn agreed_h2(&self) -> bool {
        true
    }

    /// Reads decoded bytes; `Ok(0)` is the end of the stream.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;

    /// As `read`, with the kernel's receive time (`rx_time`) of the socket
    /// read the bytes came from, once `rx_time::enable` turned stamping on.
    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<i128>)>;

    /// Accepts bytes to send; what it cannot send yet it keeps for `flush`.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;

    /// Sends what `write` kept; `Ok(true)` when nothing is left.
    fn flush(&mut self) -> io::Result<bool>;

    /// Whether a read of `n` bytes into a buffer of `cap` proves the socket
    /// is drained, so the next read can be skipped (it would be `EAGAIN`).
    fn drained(n: usize, cap: usize) -> bool;
}

impl Transport for TcpStream {
    type Shared = ();
    const HANDSHAKE: bool = false;

    #[inline]
    fn wrap(tcp: TcpStream, _: &()) -> io::Result<TcpStream> {
        Ok(tcp)
    }

    #[inline]
    fn tcp(&self) -> &TcpStream {
        self
    }

    #[inline]
    fn handshake(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    #[inline]
    fn resumed(&self) -> bool {
        false
    }

    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: recvfrom into a buffer we own, on our own socket.
        let n = unsafe { raw(libc::SYS_recvfrom, self.as_raw_fd(), buf.as_mut_ptr() as usize, buf.len(), 0) };
        syscall_result(n)
    }

    #[inline]
    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<i128>)> {
        crate::core::rx_time::recv(self.as_raw_fd(), buf)
    }

    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: sendto from a buffer we own, on our own socket. MSG_NOSIGNAL:
        // a closed peer is an error to count, never a SIGPIPE.
        let n = unsafe {
            raw(libc::SYS_sendto, self.as_raw_fd(), buf.as_ptr() as usize, buf.len(), libc::MSG_NOSIGNAL as usize)
        };
        syscall_result(n)
    }

    #[inline]
    fn flush(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    #[inline]
    fn drained(n: usize, cap: usize) -> bool {
        n < cap
    }
}

/// `send`/`recv` straight through `syscall(2)`. glibc's wrappers are
/// cancellation points that switch asynchronous cancellation on and off around
/// every call: about 2% of the generator's CPU per request in `perf`, for a
/// feature no thread here uses.
#[inline]
unsafe fn raw(nr: libc::c_long, fd: std::os::fd::RawFd, ptr: usize, len: usize, flags: usize) -> libc::c_long {
    libc::syscall(nr, fd, ptr, len, flags, 0usize, 0usize)
}

#[inline]
fn syscall_result(n: libc::c_long) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
