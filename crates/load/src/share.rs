//! What a load thread is given and what it gives back: its share of the
//! run (connections, requests, rate, the phases' instants) and its output
//! (what it recorded, its slow requests, how busy it was). Every loop, the
//! epoll and io_uring ones, HTTP/2's, and the cycle they share, speaks these
//! two types, so they live apart from any one loop.

use crate::recorder::{Recorder, Slow};
use std::time::{Duration, Instant};

/// This thread's share of the run.
pub struct Share {
    pub index: usize,
    pub connections: usize,
    pub max_connections: usize,
    /// Requests this thread may send (`-n`), or unlimited.
    pub quota: Option<u64>,
    /// This thread's requests per second (open loop).
    pub rate: Option<f64>,
    pub start: Instant,
    pub measure_from: Instant,
    /// The end of the measured phase (`-d`), or none (`-n`).
    pub end: Option<Instant>,
}

pub struct Output {
    pub recorder: Recorder,
    pub slow: Vec<Slow>,
    pub finished: Instant,
    pub max_lag_ns: u64,
    /// Time during which every connection was busy and due requests waited.
    pub starved: Duration,
    /// Share of the thread's life it spent on or waiting for a CPU (0..1).
    pub busy: f64,
}
