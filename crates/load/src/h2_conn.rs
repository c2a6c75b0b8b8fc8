//! Opening one HTTP/2 connection: TCP, TLS with ALPN `h2` (or prior
//! knowledge on `http://`), and the HTTP/2 handshake through the `h2` crate,
//! with flow-control windows large enough that they never throttle a test.
//!
//! Kept apart from `h2_worker` so the worker reads as the load loop it is.
//! The bytes the HTTP/2 layer reads (frames, after TLS) are counted here, by
//! a thin wrapper around the stream, for `bytes_read`.

use bytes::Bytes;
use rustls::pki_types::ServerName;
use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The largest window HTTP/2 allows (2^31-1): the server never waits for a
/// WINDOW_UPDATE, and bodies are released as soon as they are read.
const WINDOW: u32 = (1 << 31) - 1;

/// What opening a connection needs, shared by every connection of a run.
#[derive(Clone)]
pub struct Connector {
    pub addr: SocketAddr,
    pub tls: Option<(tokio_rustls::TlsConnector, ServerName<'static>)>,
}

/// Why a connection could not be opened.
pub enum OpenError {
    Connect,
    Tls,
    /// TLS worked but the server would not speak HTTP/2.
    Protocol,
}

/// A TLS handshake: how long it took and whether it resumed a session.
pub struct Handshake {
    pub took: Duration,
    pub resumed: bool,
}

pub type Stream = Counted<Box<dyn Io>>;

pub trait Io: AsyncRead + AsyncWrite + Unpin {}
impl<T: AsyncRead + AsyncWrite + Unpin> Io for T {}

impl Connector {
    pub fn new(addr: SocketAddr, tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>) -> Connector {
        Connector { addr, tls: tls.map(|(config, name)| (tokio_rustls::TlsConnector::from(config), name)) }
    }

    /// Opens a connection and does the HTTP/2 handshake. `bytes` counts what
    /// the HTTP/2 layer reads from then on.
    pub async fn open(
        &self,
        bytes: Rc<Cell<u64>>,
    ) -> Result<(h2::client::SendRequest<Bytes>, h2::client::Connection<Stream, Bytes>, Option<Handshake>), OpenError>
    {
        let tcp = TcpStream::connect(self.addr).await.map_err(|_| OpenError::Connect)?;
        let _ = tcp.set_nodelay(true);
        let (io, handshake): (Box<dyn Io>, _) = match &self.tls {
            None => (Box::new(tcp), None),
            Some((connector, name)) => {
                let t0 = Instant::now();
                let tls = connector.connect(name.clone(), tcp).await.map_err(|_| OpenError::Tls)?;
                let (_, session) = tls.get_ref();
                if session.alpn_protocol() != Some(b"h2") {
                    return Err(OpenError::Protocol);
                }
                let resumed = session.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                (Box::new(tls), Some(Handshake { took: t0.elapsed(), resumed }))
            }
        };
        let (send, conn) =
            client_builder().handshake(Counted { inner: io, bytes }).await.map_err(|_| OpenError::Protocol)?;
        Ok((send, conn, handshake))
    }
}

/// The HTTP/2 client settings of every connection (also used by the fuzz
/// target, crate::fuzzing, so it fuzzes the settings the runs use).
pub fn client_builder() -> h2::client::Builder {
    let mut builder = h2::client::Builder::new();
    builder.initial_window_size(WINDOW).initial_connection_window_size(WINDOW).max_frame_size(1 << 20);
    builder
}

/// Counts the bytes read through it.
pub struct Counted<S> {
    inner: S,
    bytes: Rc<Cell<u64>>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = (buf.filled().len() - before) as u64;
        self.bytes.set(self.bytes.get() + read);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
