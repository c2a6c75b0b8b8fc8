//! `https://` targets: a rustls client driven by the worker's own mio loop.
//!
//! rustls is a state machine that never touches a socket itself, so the
//! event loop stays the one for cleartext: ciphertext is read with one
//! `read_tls` per readable edge and decrypted in place, requests are encrypted
//! into rustls' buffer and sent with one `write_tls`. A read that rustls asked
//! more of than the socket had proves the socket drained, so, as in
//! cleartext, no read is spent on `EAGAIN`. All connections of a run share one
//! `Arc<ClientConfig>`, and so its session cache: a reconnect resumes the last
//! session instead of paying for a full handshake, as a browser would.
//! OpenSSL is not used: its 3.x client is several times slower under load,
//! which a load generator cannot afford.

use crate::core::transport::Transport;
use mio::net::TcpStream;
use rustls::{ClientConnection, HandshakeKind};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;

pub use stampede_spec::tls::{check_alpn, TlsOptions, TlsShared};

/// A TLS client connection over a non-blocking socket.
pub struct TlsStream {
    tcp: TcpStream,
    tls: ClientConnection,
    /// The last socket read returned less than rustls asked for: the socket
    /// is empty, and the next read would be `EAGAIN`.
    drained: bool,
    /// The kernel's receive time of the last socket read that had one.
    rx: Option<i128>,
}

/// Reads the socket for rustls and notes whether the read was short, and
/// its receive time (`rx_time`; none unless stamping was turned on).
struct Probe<'a> {
    tcp: &'a mut TcpStream,
    short: bool,
    rx: &'a mut Option<i128>,
}

impl Read for Probe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, rx) = crate::core::rx_time::recv(self.tcp.as_raw_fd(), buf)?;
        self.short = n < buf.len();
        if rx.is_some() {
            *self.rx = rx;
        }
        Ok(n)
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    /// Feeds one socket read to rustls. `Ok(false)` when the socket was empty.
    fn fill(&mut self) -> io::Result<bool> {
        if self.drained {
            self.drained = false;
            return Ok(false);
        }
        let mut probe = Probe { tcp: &mut self.tcp, short: false, rx: &mut self.rx };
        match self.tls.read_tls(&mut probe) {
            Ok(0) => {}
            Ok(_) => self.drained = probe.short,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
        self.tls.process_new_packets().map_err(tls_error)?;
        Ok(true)
    }
}

impl Transport for TlsStream {
    type Shared = TlsShared;
    const HANDSHAKE: bool = true;

    fn wrap(tcp: TcpStream, shared: &TlsShared) -> io::Result<TlsStream> {
        let mut tls = ClientConnection::new(shared.config.clone(), shared.name.clone()).map_err(tls_error)?;
        // Pipelined batches are accepted whole; the socket paces them.
        tls.set_buffer_limit(None);
        Ok(TlsStream { tcp, tls, drained: false, rx: None })
    }

    fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    fn handshake(&mut self) -> io::Result<bool> {
        loop {
            if !self.flush()? {
                return Ok(false);
            }
            if !self.tls.is_handshaking() {
                return Ok(true);
            }
            self.drained = false;
            let mut probe = Probe { tcp: &mut self.tcp, short: false, rx: &mut self.rx };
            match self.tls.read_tls(&mut probe) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
            if let Err(e) = self.tls.process_new_packets() {
                // Tell the server why (an alert) before the socket is dropped.
                let _ = self.tls.write_tls(&mut self.tcp);
                return Err(tls_error(e));
            }
        }
    }

    fn resumed(&self) -> bool {
        self.tls.handshake_kind() == Some(HandshakeKind::Resumed)
    }

    fn agreed_h2(&self) -> bool {
        self.tls.alpn_protocol() == Some(b"h2")
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed the socket without close_notify: for HTTP
                // with framed responses that is an ordinary close.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if !self.fill()? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
    }

    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<i128>)> {
        self.read(buf).map(|n| (n, self.rx))
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tls.writer().write(buf)
    }

    fn flush(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    #[inline]
    fn drained(_: usize, _: usize) -> bool {
        // A short plaintext read says nothing about the socket; the next read
        // costs no syscall when `fill` already saw the socket empty.
        false
    }
}
