//! What every protocol's event loop shares: the pacer that says when a
//! request is due, the schedule of requests in flight, the recorder and
//! timeline their latencies go to, each thread's share of the run, receive
//! timestamps, the transport over TCP or TLS and the process's CPU clock.

pub mod encodings;
mod grpc_call;
pub mod grpc_tally;
pub mod housekeeping;
pub mod output;
pub mod pacer;
pub mod recorder;
pub mod rusage;
pub mod rx_time;
pub mod schedule;
pub mod share;
pub mod timeline;
pub mod transport;
