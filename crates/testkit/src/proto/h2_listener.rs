//! The listener every `h2`-based test server here stands on: 127.0.0.1 port
//! 0, a thread with its own tokio runtime, an optional TLS acceptor (ALPN
//! h2), Nagle off, a task per connection, and a stop when dropped. The
//! servers (h2_server.rs, grpc_server.rs) differ only
//! in what they do with a connection.

use std::future::Future;
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A connection, cleartext or TLS: what `h2::server::handshake` takes.
pub trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}
pub type Conn = Box<dyn Io>;

pub struct Listener {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Listener {
    /// Serves every connection with `serve`; with `tls`, connections are
    /// TLS and must pick h2 by ALPN (a failed handshake is dropped).
    pub fn start<F, Fut>(tls: Option<Arc<rustls::ServerConfig>>, serve: F) -> Listener
    where
        F: Fn(Conn) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Listener::start_after(Duration::ZERO, tls, serve)
    }

    /// `start`, waiting `delay` on every new connection before anything
    /// else (with `tls`, before its handshake).
    pub fn start_after<F, Fut>(delay: Duration, tls: Option<Arc<rustls::ServerConfig>>, serve: F) -> Listener
    where
        F: Fn(Conn) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let std_listener = StdListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (st, serve) = (stop.clone(), Arc::new(serve));
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
                let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
                loop {
                    let Ok((tcp, _)) = listener.accept().await else { continue };
                    if st.load(Ordering::Relaxed) {
                        break;
                    }
                    let _ = tcp.set_nodelay(true);
                    let (serve, acceptor) = (serve.clone(), acceptor.clone());
                    tokio::spawn(async move {
                        if !delay.is_zero() {
                            tokio::time::sleep(delay).await;
                        }
                        match acceptor {
                            Some(a) => {
                                if let Ok(tls) = a.accept(tcp).await {
                                    serve(Box::new(tls)).await;
                                }
                            }
                            None => serve(Box::new(tcp)).await,
                        }
                    });
                }
            });
        });
        Listener { addr, stop }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}
