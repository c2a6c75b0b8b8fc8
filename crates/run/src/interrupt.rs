//! SIGINT (Ctrl-C), SIGTERM and SIGHUP set a flag instead of killing
//! `stampede run`: the runner sees it between and inside phases, stops the
//! load generator and the server it started, writes what was measured, and
//! exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). Which
//! signal it was is kept, so the record and the closing line name it: a run
//! stopped by a supervisor's SIGTERM is not reported as someone's Ctrl-C.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The number of the first signal received, 0 while none has been.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

fn received() -> &'static Arc<AtomicUsize> {
    RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// Installs the handlers once per process. Failing to install them is not
/// fatal (the run still works, only a signal then ends it abruptly).
pub fn install() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            if let Err(err) = register_number(signal) {
                eprintln!(
                    "stampede: warning: cannot catch {} ({err}); an interrupted run may leave servers behind",
                    name(signal)
                );
            }
        }
    });
}

/// Records `signal`'s number when it arrives, unless one came before.
fn register_number(signal: i32) -> std::io::Result<()> {
    let slot = received().clone();
    // SAFETY: the action only does an atomic compare-exchange, which is
    // async-signal-safe.
    unsafe {
        signal_hook::low_level::register(signal, move || {
            let _ = slot.compare_exchange(0, signal as usize, Ordering::SeqCst, Ordering::SeqCst);
        })
    }
    .map(|_| ())
}

pub fn interrupted() -> bool {
    received().load(Ordering::SeqCst) != 0
}

/// The signal that interrupted the run, if one did.
pub fn signal() -> Option<i32> {
    match received().load(Ordering::SeqCst) {
        0 => None,
        n => Some(n as i32),
    }
}

/// "SIGINT", "SIGTERM", "SIGHUP" (or "signal N").
pub fn name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// What an interrupted run's record says: "interrupted by SIGTERM".
pub fn reason() -> String {
    match signal() {
        Some(n) => format!("interrupted by {}", name(n)),
        None => "interrupted".into(),
    }
}

/// The exit status after an interrupt: 128 + the signal's number.
pub fn exit_code() -> i32 {
    128 + signal().unwrap_or(SIGINT)
}
