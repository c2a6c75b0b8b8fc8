//! `stampede run`'s latency phase, its noisy-neighbour warning and the
//! signals that stop it, each judged against the machine it has alone.

mod latency;
mod neighbours;
mod signals;
