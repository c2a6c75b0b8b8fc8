//! The accept loop every blocking test server here stands on: a listener
//! (127.0.0.1 port 0, or one the test bound itself, e.g. in a network
//! namespace), a thread that accepts, a thread per connection, and a stop
//! when dropped (a flag the connections can read, and a connection to
//! ourselves so the accept returns). The servers differ only in what they do
//! with a connection. (The tokio-based HTTP/2 servers have theirs in
//! src/proto/h2_listener.rs.)

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Accepting {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Accepting {
    /// 127.0.0.1, a port of the kernel's choosing.
    pub fn bind() -> TcpListener {
        TcpListener::bind("127.0.0.1:0").expect("bind a test server")
    }

    /// Serves every connection on `listener` with `serve`, on a thread of
    /// its own; `serve` gets the stop flag, set once this is dropped.
    pub fn start<F>(listener: TcpListener, serve: F) -> Accepting
    where
        F: Fn(TcpStream, &AtomicBool) + Send + Sync + 'static,
    {
        Accepting::start_at_most(listener, u64::MAX, serve)
    }

    /// `start`, closing the listener once `most` connections were accepted:
    /// every later connect is refused.
    pub fn start_at_most<F>(listener: TcpListener, most: u64, serve: F) -> Accepting
    where
        F: Fn(TcpStream, &AtomicBool) + Send + Sync + 'static,
    {
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (st, serve) = (stop.clone(), Arc::new(serve));
        std::thread::spawn(move || {
            for conn in listener.incoming().take(most.try_into().unwrap_or(usize::MAX)) {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (st, serve) = (st.clone(), serve.clone());
                std::thread::spawn(move || serve(conn, &st));
            }
        });
        Accepting { addr, stop }
    }
}

impl Drop for Accepting {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}
