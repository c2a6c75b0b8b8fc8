//! The probe's sampling thread and its handle. The orchestrator starts one
//! [`Probe`] per run, points it at the server's root pid, switches the load
//! generator target as each load phase starts, marks the start of the measured
//! phase, and gets a [`ProbeReport`] when the run ends. With a database under
//! the server (`[database]`), the database's process tree is a third series,
//! so the server's CPU and the database's are told apart.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use procfs::process::Schedstat;
use procfs::FromRead;

use crate::error::ProbeError;
use crate::machine::{MachineReader, MachineReading, MachineSample};
use crate::microstates::{self, RawMicro};
use crate::net_drops::{NetCounters, NetReader};
use crate::proc_file::ProcFile;
use crate::series::{sample_between, RawSample};
use crate::summary::{summarize, summarize_machine, threads_table, MachineSummary, ThreadRow, TreeSummary, Window};
use crate::tracked::{TrackedTree, TreeReading};
use stampede_schema::process::NET_DROPS_PERIOD;

#[derive(Debug, Clone, Copy)]
pub struct ProbeConfig {
    /// Time between samples (default 100 ms).
    pub interval: Duration,
    /// How often the process tree is searched for new processes.
    pub rescan: Duration,
    /// Whether the server's thread microstates are accounted (on by
    /// default; off only to measure what they cost, `bench/probe_cost.sh`).
    pub microstates: bool,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig { interval: Duration::from_millis(100), rescan: Duration::from_millis(250), microstates: true }
    }
}

/// Everything the probe measured in one run (serialisable: `stampede agent`
/// sends it from the server's host).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ProbeReport {
    pub server: TreeSummary,
    pub loadgen: TreeSummary,
    pub machine: MachineSummary,
    /// CPU the sampling thread itself used, in cores (its own cost).
    pub probe_cpu_cores: f64,
    /// The database's process tree, when one was given ([`Probe::set_database`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<TreeSummary>,
}

struct Series {
    tree: TrackedTree,
    last: (Instant, TreeReading),
    last_rescan: Instant,
    raw: Vec<RawSample>,
    /// The tree's microstates per interval; `None` when not accounted (the load generator).
    micro: Option<Vec<RawMicro>>,
    /// The server's namespace's TCP counters at the last sample (server only).
    net: Option<(NetReader, NetCounters)>,
}

impl Series {
    /// Starts a series at the target's current counters. The orchestrator
    /// attaches within a millisecond of spawning, so what the process used
    /// before is negligible, while counting it from zero over that millisecond
    /// would make the first sample read as many cores.
    fn attach(pid: i32, now: Instant, microstates: bool) -> Series {
        let mut tree = TrackedTree::new(pid);
        tree.rescan();
        let reading = tree.read(true);
        let micro = microstates.then(|| {
            tree.observe_microstates(now);
            Vec::new()
        });
        // The kernel's counters are the server's business (with microstates).
        let net = match microstates {
            true => NetReader::open(pid),
            false => None,
        };
        Series { tree, last: (now, reading), last_rescan: now, raw: Vec::new(), micro, net }
    }

    fn sample(&mut self, now: Instant, rescan: Duration, detail: bool, net: bool) {
        if now.duration_since(self.last_rescan) >= rescan || self.tree.is_empty() {
            self.tree.rescan();
            self.last_rescan = now;
        }
        if self.tree.is_empty() {
            return;
        }
        let reading = self.tree.read(detail);
        let wall_s = now.duration_since(self.last.0).as_secs_f64();
        if wall_s <= 0.0 {
            return;
        }
        let mut sample = sample_between(&self.last.1, &reading, wall_s);
        if let Some((reader, last)) = self.net.as_mut().filter(|_| net) {
            if let Some(now) = reader.read() {
                sample.net_drops = now.since(last);
                *last = now;
            }
        }
        self.raw.push(RawSample { at: now, wall_s, sample });
        if let Some(micro) = self.micro.as_mut() {
            let observed = self.tree.observe_microstates(now);
            micro.push(RawMicro { at: now, wall_s, observed });
        }
        self.last = (now, reading);
    }
}

struct State {
    server: Option<Series>,
    loadgen: Option<Series>,
    database: Option<Series>,
    /// Load-generator samples of earlier phases (its process changes per phase).
    loadgen_raw: Vec<RawSample>,
    machine: MachineReader,
    machine_last: Option<(Instant, MachineReading)>,
    machine_raw: Vec<(Instant, f64, MachineSample)>,
    t0: Option<Instant>,
    /// The measured phase's end, when marked before a latency phase.
    until: Option<Instant>,
    /// What is summed from per-thread totals, taken at that end.
    frozen: Option<Frozen>,
    config: ProbeConfig,
    ticks_per_s: f64,
    /// Samples taken, to read the costlier files every so many samples.
    count: u64,
    /// Every how many samples the machine's `/proc/stat` is read (100 ms).
    machine_every: u64,
    /// Every how many samples each thread's `stat` and `status` are read (1 s).
    detail_every: u64,
    /// Every how many samples the server's TCP counters are read
    /// (`NET_DROPS_PERIOD`, 100 ms).
    net_every: u64,
}

impl State {
    /// The per-thread tables and microstates as of now.
    fn totals_now(&self) -> Frozen {
        let ticks = self.ticks_per_s;
        let server = self.server.as_ref();
        Frozen {
            server_threads: server.map(|s| threads_table(&s.tree, ticks)).unwrap_or_default(),
            server_microstates: server.and_then(|s| {
                s.micro.as_ref().map(|raw| microstates::summarize(&s.tree, raw, self.t0, self.config.interval))
            }),
            loadgen_threads: self.loadgen.as_ref().map(|s| threads_table(&s.tree, ticks)).unwrap_or_default(),
        }
    }

    /// Samples every target; `force_detail` also refreshes the per-thread
    /// ticks and context switches (done at phase boundaries so totals are exact).
    fn sample_all(&mut self, force_detail: bool) {
        let now = Instant::now();
        let rescan = self.config.rescan;
        let detail = force_detail || self.count.is_multiple_of(self.detail_every);
        let machine = force_detail || self.count.is_multiple_of(self.machine_every);
        let net = force_detail || self.count.is_multiple_of(self.net_every);
        self.count += 1;
        if let Some(series) = self.server.as_mut() {
            series.sample(now, rescan, detail, net);
        }
        if let Some(series) = self.loadgen.as_mut() {
            series.sample(now, rescan, detail, false);
        }
        if let Some(series) = self.database.as_mut() {
            series.sample(now, rescan, detail, false);
        }
        if !machine {
            return;
        }
        if let Some(reading) = self.machine.read() {
            if let Some((at, last)) = self.machine_last {
                let wall_s = now.duration_since(at).as_secs_f64();
                if wall_s > 0.0 {
                    let (all, user, sys) = reading.cores_since(&last, self.ticks_per_s, wall_s);
                    let sample = MachineSample { t_s: 0.0, cpu_cores: all, cpu_user_cores: user, cpu_sys_cores: sys };
                    self.machine_raw.push((now, wall_s, sample));
                }
            }
            self.machine_last = Some((now, reading));
        }
    }
}

/// The figures that come from per-thread totals (not from the series),
/// taken when the measured phase's end is marked, so a later phase on the
/// same server does not reach them.
struct Frozen {
    server_threads: Vec<ThreadRow>,
    server_microstates: Option<stampede_schema::microstates::Microstates>,
    loadgen_threads: Vec<ThreadRow>,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
}

/// A running probe. Dropping it stops the sampling thread.
pub struct Probe {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<u64>>,
    started: Instant,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The machine's CPU (`/proc/stat`, one file of about 20 µs) is read at most
/// every 100 ms.
const MACHINE_PERIOD: Duration = Duration::from_millis(100);

/// Each thread's tick counters, name and context switches (`stat` and
/// `status`, 5 and 10 µs a thread) are read every second, and at the start
/// and end of the measured phase, so their totals stay exact. Read every
/// 100 ms they were most of the probe's cost at the default interval
/// (measured for a 31-thread process at 100 ms: 0.86 % of a core, 0.25 %
/// once read every second). What this gives up: the context switches of the
/// time series land in one sample a second, and a thread that exits loses
/// the ticks and switches of its last second (from the thread table and the
/// switch totals; its CPU comes from `schedstat`, read every sample).
const DETAIL_PERIOD: Duration = Duration::from_secs(1);

/// Every how many samples something with `period` is read.
fn every(interval: Duration, period: Duration) -> u64 {
    if interval >= period || interval.is_zero() {
        1
    } else {
        period.as_nanos().div_ceil(interval.as_nanos()) as u64
    }
}

fn thread_runtime_ns() -> u64 {
    let Ok(file) = ProcFile::open(Path::new("/proc/thread-self/schedstat")) else {
        return 0;
    };
    let mut buf = Vec::new();
    let Ok(text) = file.read(&mut buf) else {
        return 0;
    };
    Schedstat::from_read(text).map(|s| s.sum_exec_runtime).unwrap_or(0)
}

impl Probe {
    /// Starts sampling the process tree rooted at `server_pid`.
    pub fn start(config: ProbeConfig, server_pid: i32) -> Result<Probe, ProbeError> {
        if !Path::new("/proc/self/stat").exists() {
            return Err(ProbeError::Proc {
                path: "/proc/self/stat".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        if !Path::new(&format!("/proc/{server_pid}")).exists() {
            return Err(ProbeError::NoSuchProcess { pid: server_pid });
        }
        let now = Instant::now();
        let mut state = State {
            server: Some(Series::attach(server_pid, now, config.microstates)),
            loadgen: None,
            database: None,
            loadgen_raw: Vec::new(),
            machine: MachineReader::new(),
            machine_last: None,
            machine_raw: Vec::new(),
            t0: None,
            until: None,
            frozen: None,
            config,
            ticks_per_s: procfs::ticks_per_second() as f64,
            count: 0,
            machine_every: every(config.interval, MACHINE_PERIOD),
            detail_every: every(config.interval, DETAIL_PERIOD),
            net_every: every(config.interval, NET_DROPS_PERIOD),
        };
        state.sample_all(true);
        let shared = Arc::new(Shared { state: Mutex::new(state), stop: AtomicBool::new(false) });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("stampede-probe".into())
            .spawn(move || sampling_loop(&worker))
            .map_err(|source| ProbeError::Proc { path: "/proc".into(), source })?;
        Ok(Probe { shared, thread: Some(thread), started: now })
    }

    /// Points the load-generator series at a new process (one per phase).
    pub fn set_loadgen(&self, pid: i32) {
        let mut state = lock(&self.shared);
        if let Some(old) = state.loadgen.take() {
            state.loadgen_raw.extend(old.raw);
        }
        state.loadgen = Some(Series::attach(pid, Instant::now(), false));
    }

    /// Samples the tree rooted at `pid` (a database's postmaster) too, for the
    /// rest of the run. Its backends come and go with connections; the
    /// periodic rescan finds them.
    pub fn set_database(&self, pid: i32) {
        lock(&self.shared).database = Some(Series::attach(pid, Instant::now(), false));
    }

    /// Takes a sample now and makes it the start of the measured phase: later
    /// samples count, earlier ones are warmup. Per-thread baselines are taken.
    pub fn mark_measured_start(&self) {
        let mut state = lock(&self.shared);
        state.sample_all(true);
        state.t0 = Some(Instant::now());
        if let Some(series) = state.server.as_mut() {
            series.tree.mark_baseline();
        }
    }

    /// Takes a sample now and makes it the end of the measured phase: the
    /// figures stop here, while the series goes on (a latency phase follows
    /// on the same server). Per-thread totals are read now.
    pub fn mark_measured_end(&self) {
        let mut state = lock(&self.shared);
        state.sample_all(true);
        state.until = Some(Instant::now());
        state.frozen = Some(state.totals_now());
    }

    /// Takes a last sample, stops the thread and summarises the run.
    pub fn finish(mut self) -> ProbeReport {
        lock(&self.shared).sample_all(true);
        let probe_ns = self.stop_thread();
        let wall_s = self.started.elapsed().as_secs_f64();
        let mut state = lock(&self.shared);
        let cores = crate::host::machine_cores();
        let window = Window { from: state.t0, until: state.until };
        let frozen = match state.frozen.take() {
            Some(frozen) => frozen,
            None => state.totals_now(),
        };
        let server = match state.server.as_ref() {
            Some(series) => {
                let mut summary = summarize(&series.raw, window, cores);
                summary.threads_table = frozen.server_threads;
                summary.microstates = frozen.server_microstates;
                summary
            }
            None => TreeSummary::default(),
        };
        let last_loadgen = state.loadgen.take();
        let mut raw = std::mem::take(&mut state.loadgen_raw);
        if let Some(series) = &last_loadgen {
            raw.extend(series.raw.iter().copied());
        }
        let mut loadgen = summarize(&raw, window, cores);
        loadgen.threads_table = frozen.loadgen_threads;
        let machine = summarize_machine(&state.machine_raw, window);
        let database = state.database.as_ref().map(|series| summarize(&series.raw, window, cores));
        ProbeReport { server, loadgen, machine, probe_cpu_cores: probe_ns as f64 / 1e9 / wall_s, database }
    }

    fn stop_thread(&mut self) -> u64 {
        self.shared.stop.store(true, Ordering::SeqCst);
        let Some(thread) = self.thread.take() else {
            return 0;
        };
        thread.join().unwrap_or(0)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Samples every `interval` until told to stop; returns its own CPU time (ns).
/// It sleeps between samples rather than waiting on a futex with a timeout:
/// on a virtual machine a timed futex wait costs twice what `nanosleep` does
/// (measured: 0.5 % against 0.25 % of a core at 10 ms), and the probe's whole
/// budget is 1 %. `stop` is therefore seen within 100 ms at most.
fn sampling_loop(shared: &Shared) -> u64 {
    let interval = lock(shared).config.interval;
    let nap = interval.min(Duration::from_millis(100));
    let mut next = Instant::now() + interval;
    loop {
        loop {
            if shared.stop.load(Ordering::SeqCst) {
                return thread_runtime_ns();
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            std::thread::sleep((next - now).min(nap));
        }
        lock(shared).sample_all(false);
        next += interval;
        let now = Instant::now();
        if next < now {
            // Fell behind (the machine is busy): skip rather than burst.
            next = now + interval;
        }
    }
}
