//! Open-loop load against servers with known stalls or a known handshake
//! delay, where the true latency distribution is computed by hand.

mod grpc_open_loop;
mod io_uring_off;
mod open_loop;
mod setup;
