//! Errors of the probe: the one thing that can go wrong before sampling starts
//! is that /proc is not there or not readable; after that a vanished process
//! is normal (a worker exited) and is not an error.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot read {path}: {source} (the probe needs Linux with /proc mounted)")]
    Proc {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("process {pid} does not exist (it exited before the probe started)")]
    NoSuchProcess { pid: i32 },
}
