//! The HTTP/2 client path (`stampede_load::fuzzing::h2_exchange`: the
//! handshake with the runs' settings, one GET, the response and its body read
//! to the end) against a server that sends a valid preface (an empty SETTINGS
//! frame) and then the fuzzer's bytes, over an in-memory duplex stream.
//! Invariant: no panic, and every input ends (the runtime's clock is paused,
//! so the one-second bound costs no real time when the client waits).

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// SETTINGS, no parameters, stream 0: the server's connection preface.
const SERVER_PREFACE: [u8; 9] = [0, 0, 0, 4, 0, 0, 0, 0, 0];

fuzz_target!(|data: &[u8]| {
    let server_bytes = data.to_vec();
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
    rt.block_on(async move {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let peer = tokio::spawn(async move {
            let _ = server.write_all(&SERVER_PREFACE).await;
            let _ = server.write_all(&server_bytes).await;
            // Read (and drop) what the client sends until it goes away.
            let mut sink = [0u8; 4096];
            while let Ok(n) = server.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        });
        let _ = tokio::time::timeout(Duration::from_secs(1), stampede_load::fuzzing::h2_exchange(client)).await;
        peer.abort();
    });
});
