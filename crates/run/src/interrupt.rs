//! Ctrl-C (SIGINT) and SIGTERM set a flag instead of killing `stampede run`:
//! the runner sees it between and inside phases, stops the load generator and
//! the server group it started, writes what was measured, and exits 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the handler once per process. Failing to install it is not fatal
/// (the run still works, only Ctrl-C is then abrupt).
pub fn install() {
    INSTALL.call_once(|| {
        if let Err(err) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
            eprintln!("stampede: warning: cannot catch Ctrl-C ({err}); an interrupted run may leave servers behind");
        }
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
