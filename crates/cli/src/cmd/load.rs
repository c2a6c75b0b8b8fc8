//! `stampede load URL`: flags in wrk's style turned into a `LoadConfig`, the
//! run, and its result printed for people or as JSON. Glue only: the engine
//! is the `stampede-load` crate.

use anyhow::Context;
use stampede_load::units::{parse_count, parse_duration, parse_whole};
use stampede_load::{text, LoadConfig, Stop};
use stampede_schema::hosts::HostsSpec;
use stampede_schema::spec::{Arrival, Body, IoBackend, LoadSpec, Order};
use stampede_schema::stages::Ramp;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const EXAMPLES: &str = "\
Examples:
  stampede load http://127.0.0.1:9009/plaintext
      10 s, 1 thread, 32 keep-alive connections, closed loop (like wrk).
  stampede load -c 64 -t 2 -d 30s --warmup 5s http://127.0.0.1:9009/json
      30 s measured after a 5 s warmup that is run but not recorded.
  stampede load --rate 20k -d 20s --slow-log 50 http://127.0.0.1:9009/values/5
      Open loop at 20,000 req/s: latency from each request's intended send time
      (no coordinated omission), with the 50 slowest requests in the JSON.
  stampede load -n 10000 -m POST -H 'Content-Type: application/json' --body '{}' URL
      Exactly 10,000 requests, then stop.
  stampede load --find-max --slo 'p99<10ms' -d 5s --warmup 1s URL
      Capacity search: the highest rate whose p99 stays under 10 ms with no
      errors, by short open-loop steps (every step is in the JSON).
  stampede load --pipeline 16 -c 8 http://127.0.0.1:9009/plaintext
      HTTP/1.1 pipelining: 16 requests written back to back per connection,
      responses matched in order (closed loop only).
  stampede load --insecure https://127.0.0.1:8443/
      HTTPS through rustls, accepting a self-signed certificate; TLS
      handshake time is reported apart from request latency.
  stampede load --http2 --streams 10 -c 4 https://127.0.0.1:8443/
  stampede load --http3 --streams 10 -c 4 -k https://127.0.0.1:8443/
      HTTP/2 (ALPN h2; prior knowledge on http://), 10 concurrent streams on
      each of 4 connections.
  stampede load -n 10000 'http://127.0.0.1:9009/api/fib/{1..100}' http://127.0.0.1:9009/api/count/35
      A mix: /api/fib/1 … /api/fib/100 in turn, alternating with /api/count/35;
      requests, errors and latency per target in the text and the JSON.
  stampede load --targets mix.txt --order random --seed 7 -d 30s
      Targets with their own method, headers, body and weight from a file
      (docs/load.md, Request mixes); the same seed repeats the same choices.
  stampede load --print-spec -c 8 -m POST --body-file item.json URL > load.json
      Save the load as a spec document (every option, as JSON) without
      sending anything...
  stampede load --spec load.json --json
      ...and replay exactly that load later (--spec - reads stdin; fields in
      docs/load.md, The load spec).
  stampede load --stages 30s:1k,1m:5k,30s:0 -c 64 URL
      Open loop ramped from 0 to 1,000 req/s over 30 s, on to 5,000 over a
      minute, then down to 0: a line per stage (requests, rate, errors, tail).
  stampede load --stages 10s:16,20s:16,10s:256 --ramp connections URL
      Closed loop from 0 to 16 connections, held, then up to 256.
  stampede load --proto bench.proto --call stampede.bench.v1.Bench/Unary \\
      --data '{\"text\":\"hi\",\"a\":1,\"b\":2}' --streams 10 -c 4 127.0.0.1:50051
      gRPC (docs/grpc.md): unary calls on HTTP/2, the request encoded once;
      a call is an error unless its grpc-status is OK, counted per status.
  stampede load --protoset bench.protoset --call stampede.bench.v1.Bench/Stream \\
      --data '{\"count\":100}' --rate 2k --deadline 500ms 127.0.0.1:50051
      Server streaming in open loop: calls/s, messages/s, time to the first
      message; grpc-timeout 500m sent with every call.
  stampede load --call stampede.bench.v1.Bench/Unary -n 10k 127.0.0.1:50051
      No .proto: the schema is asked of the server by reflection (v1, then
      v1alpha) before the run, and carried in the spec.
  stampede load --json URL > result.json
      One stampede.load/1 JSON object on stdout (see docs/results.md).
  stampede load --hosts me@load1,me@load2 -c 64 -d 30s http://10.0.0.9:8080/json
      Load from two machines over ssh, 32 connections each, started at one
      agreed instant; merged histograms, a row per host (docs/hosts.md).
  stampede load --hosts me@load1,me@load2 --copy-binary --rate 40k --on-host-failure continue URL
      Send this binary to hosts that lack it; a host that fails is named and
      the rest go on (the JSON says partial: true).

Exit status: 0 the run completed (errors during it are counted, not fatal),
1 the server stopped answering during the run (STALLED: its figures are not a
measurement of a working server; the results are still printed), 2 bad usage,
the target could not be reached, or (with --hosts and --on-host-failure stop)
a load host failed.";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES, group(clap::ArgGroup::new("spec_flags").multiple(true)))]
pub struct Args {
    /// Read the whole load (every option above the "Load hosts" ones) from a
    /// JSON spec document, or stdin with -; see docs/load.md, "The load spec"
    #[arg(long, value_name = "FILE", conflicts_with = "spec_flags", help_heading = "Load spec")]
    pub spec: Option<PathBuf>,

    /// Print the load spec these flags (or --spec) describe as JSON and exit
    /// without sending anything: save it, then replay it with --spec FILE
    #[arg(long, help_heading = "Load spec")]
    pub print_spec: bool,

    /// Target URL(s), e.g. http://127.0.0.1:9009/plaintext; several (same
    /// scheme, host and port) make a mix, and a path may hold templates:
    /// {1..100} counts, {rand:1..10000} is random, {a|b|c} picks one
    #[arg(group = "spec_flags", value_name = "URL", required_unless_present_any = ["targets", "spec", "print_spec"])]
    pub urls: Vec<String>,

    /// Read targets (method, URL template, headers, body, weight) from FILE, or
    /// stdin with -; the format is in docs/load.md
    #[arg(group = "spec_flags", long, value_name = "FILE", help_heading = "Request mix")]
    pub targets: Option<std::path::PathBuf>,

    /// With several targets: round-robin (weights honoured in every window)
    /// or random (in proportion to the weights)
    #[arg(group = "spec_flags", long, value_enum, default_value = "round-robin", help_heading = "Request mix")]
    pub order: OrderArg,

    /// Seed of every random choice (random order, {rand:…}, {a|b}); printed
    /// with the result, so a run can be repeated [default: from the clock]
    #[arg(group = "spec_flags", long, value_name = "N", value_parser = parse_whole, help_heading = "Request mix")]
    pub seed: Option<u64>,

    /// Keep-alive connections to open (spread over the threads)
    #[arg(group = "spec_flags", short = 'c', long, default_value = "32", value_parser = positive)]
    pub connections: u64,

    /// Load generator threads, one event loop each
    #[arg(group = "spec_flags", short = 't', long, default_value = "1", value_parser = positive)]
    pub threads: u64,

    /// How long to measure, e.g. 10s, 1m
    #[arg(group = "spec_flags", short = 'd', long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,

    /// Send exactly this many requests, then stop (e.g. 10000, 50k)
    #[arg(group = "spec_flags", short = 'n', long, value_name = "N", value_parser = positive)]
    pub requests: Option<u64>,

    /// HTTP method
    #[arg(group = "spec_flags", short = 'm', long, default_value = "GET")]
    pub method: String,

    /// Add a request header, "Name: value" (repeatable)
    #[arg(group = "spec_flags", short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Request body
    #[arg(group = "spec_flags", long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Read the request body from a file
    #[arg(group = "spec_flags", long, value_name = "PATH")]
    pub body_file: Option<std::path::PathBuf>,

    /// A request with no response after this long counts as a timeout and its connection is reopened
    #[arg(group = "spec_flags", long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Run this long before measuring; those requests are sent but not recorded
    #[arg(group = "spec_flags", long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration, conflicts_with = "requests")]
    pub warmup: Duration,

    /// Open loop: send this many requests per second in total (e.g. 500, 20k) on a schedule,
    /// measuring latency from each request's intended send time
    #[arg(group = "spec_flags", short = 'R', long, value_name = "RATE", value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Open loop: spacing of intended send times
    #[arg(group = "spec_flags", long, value_enum, default_value = "uniform", requires = "rate")]
    pub arrival: ArrivalArg,

    /// Open loop: let connections grow to this many when all are busy (default: --connections)
    #[arg(group = "spec_flags", long, value_name = "N", value_parser = positive, requires = "rate")]
    pub max_connections: Option<u64>,

    /// Open loop: a p99 send delay caused by the generator, beyond its wake-up granularity, above this marks the run saturated
    #[arg(group = "spec_flags", long, value_name = "DURATION", default_value = "1ms", value_parser = parse_duration)]
    pub max_lag: Duration,

    /// Open loop: the longest a due request may wait for the generator's next wake-up, which
    /// sends everything due (default: 1ms with --http2/--grpc, 500us otherwise). Longer
    /// wakes less often, costing less CPU per request at low rates, and adds up to this
    /// much to each request's latency, measured from its intended send time
    #[arg(group = "spec_flags", long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_granularity: Option<Duration>,

    /// Ramp the load through stages DURATION:TARGET,…: the open-loop rate
    /// (req/s) moves linearly from the previous stage's target (0 before the
    /// first) to each stage's; with --ramp connections, the closed loop's
    /// connections do. The run lasts as long as the stages together.
    #[arg(long, value_name = "STAGES", conflicts_with_all = ["duration", "requests", "rate", "warmup", "find_max", "hosts"])]
    pub stages: Option<String>,

    /// What --stages ramps: the arrival rate (open loop) or the connections (closed loop)
    #[arg(long, value_enum, default_value = "rate", requires = "stages")]
    pub ramp: RampArg,

    /// Keep the N slowest requests with their timestamps (JSON: slow_requests)
    #[arg(group = "spec_flags", long, value_name = "N", default_value = "0", value_parser = parse_whole)]
    pub slow_log: u64,

    /// Search for the highest rate that meets --slo (open-loop steps of --duration each)
    #[arg(long, requires = "slo", conflicts_with_all = ["rate", "requests"])]
    pub find_max: bool,

    /// Latency objective for --find-max, e.g. 'p99<10ms', 'p99.9<500us'
    #[arg(long, value_parser = stampede_load::capacity::Slo::parse, requires = "find_max")]
    pub slo: Option<stampede_load::capacity::Slo>,

    /// Print one stampede.load/1 JSON object on stdout instead of the text report
    #[arg(long)]
    pub json: bool,

    /// No live progress line (it is drawn on stderr only when stdout and
    /// stderr are terminals)
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Write each second's latency histogram to FILE as an HdrHistogram interval
    /// log (HistogramLogProcessor and every HdrHistogram library read it)
    #[arg(group = "spec_flags", long, value_name = "FILE", conflicts_with_all = ["hosts", "find_max"])]
    pub hdr_log: Option<std::path::PathBuf>,

    /// HTTP/1.1: write N requests back to back per connection, then read their
    /// responses in order (closed loop only)
    #[arg(group = "spec_flags", long, value_name = "N", default_value = "1", value_parser = positive)]
    pub pipeline: u64,

    /// HTTP/1.1: close each connection after N responses and open a new one
    /// (connection churn, as HttpArena's limited-conn profile)
    #[arg(group = "spec_flags", long, value_name = "N", value_parser = positive)]
    pub requests_per_connection: Option<u64>,

    /// Speak HTTP/2: ALPN h2 on https://, prior knowledge (h2c) on http://
    #[arg(group = "spec_flags", long)]
    pub http2: bool,

    /// Speak HTTP/3 over QUIC (UDP, ALPN h3) to an https:// URL
    #[arg(group = "spec_flags", long, conflicts_with_all = ["http2", "alpn"])]
    pub http3: bool,

    /// HTTP/2 and HTTP/3: concurrent streams per connection
    #[arg(group = "spec_flags", long, value_name = "N", default_value = "1", value_parser = positive)]
    pub streams: u64,

    /// https://: accept any server certificate (self-signed test servers)
    #[arg(group = "spec_flags", short = 'k', long, conflicts_with = "ca")]
    pub insecure: bool,

    /// https://: trust the CA certificates in this PEM file instead of the system's
    #[arg(group = "spec_flags", long, value_name = "FILE")]
    pub ca: Option<std::path::PathBuf>,

    /// https://: protocols to offer by ALPN, most preferred first (h2, http/1.1);
    /// the run speaks the one the server picks
    #[arg(group = "spec_flags", long, value_name = "LIST", value_delimiter = ',')]
    pub alpn: Vec<String>,

    /// Event loop for cleartext HTTP/1.1: io-uring (sends and receives of a
    /// batch in one system call), epoll, or auto (io-uring where the kernel
    /// allows it). HTTPS and HTTP/2 have their own loops.
    #[arg(group = "spec_flags", long, value_enum, default_value = "auto")]
    pub engine: IoBackendArg,

    /// Run the load from these hosts over ssh, e.g. me@load1,me@load2 (repeatable);
    /// connections, --rate and --requests are split among them (docs/hosts.md)
    #[arg(
        long,
        value_name = "USER@HOST,…",
        value_delimiter = ',',
        conflicts_with = "find_max",
        help_heading = "Load hosts"
    )]
    pub hosts: Vec<String>,

    /// With --hosts: copy this binary to hosts that lack this version (to ~/.cache/stampede)
    #[arg(long, requires = "hosts", help_heading = "Load hosts")]
    pub copy_binary: bool,

    /// With --hosts: the stampede to run on the hosts [default: stampede, on their PATH]
    #[arg(long, value_name = "PATH", requires = "hosts", help_heading = "Load hosts")]
    pub remote_path: Option<String>,

    /// With --hosts: ssh client config to use (ssh -F FILE) instead of ~/.ssh/config
    #[arg(long, value_name = "FILE", requires = "hosts", help_heading = "Load hosts")]
    pub ssh_config: Option<std::path::PathBuf>,

    /// With --hosts: when a host fails, stop the others (exit 2) or go on without it
    /// (the result is marked partial)
    #[arg(long, value_enum, default_value = "stop", help_heading = "Load hosts")]
    pub on_host_failure: OnHostFailure,

    /// With --hosts: a host whose clock differs from this one's by more counts as failed
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration, help_heading = "Load hosts")]
    pub max_clock_offset: Duration,

    /// With --hosts: give up on connecting to a host after this long
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration, help_heading = "Load hosts")]
    pub connect_timeout: Duration,

    /// Start at this wall-clock instant (unix seconds, e.g. 1767225600.5, or RFC 3339);
    /// set by the controller of a --hosts run
    #[arg(long, value_name = "INSTANT", value_parser = parse_instant, conflicts_with = "hosts")]
    pub start_at: Option<SystemTime>,

    /// End the run (printing its result) when stdin closes: how a --hosts controller stops a host
    #[arg(long, hide = true)]
    pub exit_on_stdin_eof: bool,

    #[command(flatten)]
    pub grpc: super::load_grpc::GrpcArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnHostFailure {
    Stop,
    Continue,
}

/// `--start-at`: unix seconds (with a fraction) or an RFC 3339 timestamp.
fn parse_instant(s: &str) -> Result<SystemTime, String> {
    if let Ok(secs) = s.parse::<f64>() {
        if let Some(at) = Duration::try_from_secs_f64(secs).ok().and_then(|d| UNIX_EPOCH.checked_add(d)) {
            return Ok(at);
        }
    }
    humantime::parse_rfc3339_weak(s).map_err(|_| {
        format!("{s:?} is not an instant; use unix seconds (e.g. 1767225600.25) or RFC 3339 (2026-01-01T00:00:00Z)")
    })
}

/// Sleeps until `--start-at`, or fails if that instant has passed.
fn wait_until(at: SystemTime, interrupt: &AtomicBool) -> anyhow::Result<()> {
    if let Err(e) = at.duration_since(SystemTime::now()) {
        let secs = at.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        anyhow::bail!(
            "--start-at {secs:.3} is {:.3} s in the past on this host; give a future instant (check this host's clock)",
            e.duration().as_secs_f64()
        );
    }
    while let Ok(left) = at.duration_since(SystemTime::now()) {
        if interrupt.load(Ordering::Relaxed) || left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    Ok(())
}

/// `--exit-on-stdin-eof`: a controller that goes away (or closes our stdin
/// on purpose) ends the run as Ctrl-C would, results and all.
fn stop_on_stdin_eof(flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        flag.store(true, Ordering::Relaxed);
    });
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OrderArg {
    RoundRobin,
    Random,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum RampArg {
    Rate,
    Connections,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum IoBackendArg {
    Auto,
    Epoll,
    IoUring,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ArrivalArg {
    Uniform,
    Poisson,
}

fn positive(s: &str) -> Result<u64, String> {
    match parse_whole(s)? {
        0 => Err("must be at least 1".into()),
        n => Ok(n),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match parse_count(s)? {
        r if r > 0.0 => Ok(r),
        _ => Err("must be above 0 requests per second".into()),
    }
}

impl Args {
    /// The load spec these flags describe (`--spec`: the document's), and
    /// the directory its relative paths start from.
    pub fn spec(&self) -> anyhow::Result<(LoadSpec, PathBuf)> {
        let (mut spec, dir) = self.load_spec()?;
        if !self.hosts.is_empty() {
            spec.from_hosts = Some(self.hosts_spec());
        }
        Ok((spec, dir))
    }

    /// Why the load cannot run, in the words it was written in: the
    /// flags, or the `--spec` document's fields (`connections`, not a
    /// `--connections` flag `--spec` refuses).
    pub fn spec_error(&self, e: stampede_load::spec::SpecError) -> anyhow::Error {
        match &self.spec {
            Some(path) => anyhow::anyhow!("--spec {}: {}", path.display(), e.in_document()),
            None => e.into(),
        }
    }

    /// The "Load hosts" flags: where the load is sent from.
    fn hosts_spec(&self) -> HostsSpec {
        HostsSpec {
            hosts: self.hosts.clone(),
            copy_binary: self.copy_binary,
            remote_path: self.remote_path.clone(),
            ssh_config: self.ssh_config.as_deref().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
            on_host_failure: match self.on_host_failure {
                OnHostFailure::Stop => stampede_schema::hosts::OnHostFailure::Stop,
                OnHostFailure::Continue => stampede_schema::hosts::OnHostFailure::Continue,
            },
            max_clock_offset: self.max_clock_offset,
            connect_timeout: self.connect_timeout,
        }
    }

    /// The load itself: `--spec`'s document, or the flags above "Load hosts".
    fn load_spec(&self) -> anyhow::Result<(LoadSpec, PathBuf)> {
        if let Some(path) = &self.spec {
            return read_spec(path);
        }
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let spec = LoadSpec {
            urls: self.urls.clone(),
            method: self.method.clone(),
            headers: self.headers.clone(),
            body: match (&self.body, &self.body_file) {
                (Some(text), _) => Some(Body::Bytes(text.clone().into_bytes())),
                (None, Some(file)) => Some(Body::File(absolute(file))),
                (None, None) => None,
            },
            targets: self.targets.as_deref().map(|t| if t.as_os_str() == "-" { t.to_path_buf() } else { absolute(t) }),
            mix: Vec::new(),
            order: match self.order {
                OrderArg::RoundRobin => Order::RoundRobin,
                OrderArg::Random => Order::Random,
            },
            seed: self.seed,
            connections: self.connections,
            max_connections: self.max_connections,
            threads: self.threads,
            duration: self.duration,
            requests: self.requests,
            warmup: self.warmup,
            timeout: self.timeout,
            rate: self.rate,
            arrival: match self.arrival {
                ArrivalArg::Uniform => Arrival::Uniform,
                ArrivalArg::Poisson => Arrival::Poisson,
            },
            max_lag: self.max_lag,
            max_granularity: self.max_granularity,
            slow_log: self.slow_log,
            pipeline: self.pipeline,
            requests_per_connection: self.requests_per_connection,
            http2: self.http2,
            http3: self.http3,
            streams: self.streams,
            insecure: self.insecure,
            ca: self.ca.as_deref().map(absolute),
            alpn: self.alpn.clone(),
            engine: match self.engine {
                IoBackendArg::Auto => IoBackend::Auto,
                IoBackendArg::Epoll => IoBackend::Epoll,
                IoBackendArg::IoUring => IoBackend::IoUring,
            },
            hdr_log: self.hdr_log.clone(),
            stages: self.stages.clone(),
            ramp: match self.ramp {
                RampArg::Rate => Ramp::Rate,
                RampArg::Connections => Ramp::Connections,
            },
            grpc: self.grpc.spec(absolute)?,
            from_hosts: None,
        };
        Ok((spec, PathBuf::new()))
    }
}

/// `--spec FILE|-`: a spec document; relative paths in it start from its directory.
fn read_spec(path: &Path) -> anyhow::Result<(LoadSpec, PathBuf)> {
    if path.as_os_str() == "-" {
        let spec = LoadSpec::read_json(std::io::stdin().lock()).map_err(|e| anyhow::anyhow!("--spec -: {e}"))?;
        return Ok((spec, PathBuf::new()));
    }
    let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("--spec {}: cannot read: {e}", path.display()))?;
    let spec = LoadSpec::read_json(std::io::BufReader::new(file))
        .map_err(|e| anyhow::anyhow!("--spec {}: {e}", path.display()))?;
    Ok((spec, path.parent().map(Path::to_path_buf).unwrap_or_default()))
}

/// `stampede load` on this machine, of the spec `args.spec()` gave.
pub fn run(args: Args, spec: &LoadSpec, dir: &Path) -> anyhow::Result<i32> {
    let mut cfg = stampede_load::spec::config(spec, dir).map_err(|e| args.spec_error(e))?;
    cfg.interrupt = interrupt_flag()?;
    if args.exit_on_stdin_eof {
        stop_on_stdin_eof(cfg.interrupt.clone());
    }
    if let Some(at) = args.start_at {
        wait_until(at, &cfg.interrupt)?;
    }
    if let (true, Some(slo)) = (args.find_max, args.slo) {
        return find_max(cfg, &slo, args.json);
    }
    if !args.json {
        let what = match cfg.stop {
            Stop::Duration(d) => format!("{} test", humantime::format_duration(d)),
            Stop::Requests(n) => format!("{n} requests"),
        };
        print!("{}", text::banner(&cfg.target.url, cfg.threads, cfg.connections, &what));
    }
    let progress = super::load_progress::LoadProgress::new(&cfg, args.quiet);
    let show = |live: &stampede_load::progress::Live| progress.iter().for_each(|p| p.show(live));
    let result = stampede_load::run_watched(&cfg, progress.as_ref().map(|_| &show as _));
    progress.iter().for_each(|p| p.finish());
    let result = result?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", text::render(&result));
    }
    // 1 when the server stopped answering, as `stampede run` exits 1 for an
    // invalid run: a script or CI job that checks only the status cannot
    // take a hung server's figures for a measurement. Errors are counted,
    // not fatal, as wrk and oha treat them.
    Ok(result.exit_status())
}

fn find_max(mut cfg: LoadConfig, slo: &stampede_load::capacity::Slo, json: bool) -> anyhow::Result<i32> {
    use stampede_load::capacity;
    if !matches!(cfg.stop, Stop::Duration(_)) {
        anyhow::bail!("--find-max needs --duration (the length of each step)");
    }
    if !json {
        println!("Capacity search for {} @ {}", slo.label(), cfg.target.url);
    }
    let step = |rate: Option<f64>| {
        let mut c = cfg.clone();
        c.rate = rate;
        c.max_connections = c.max_connections.max(c.connections * 4);
        stampede_load::run(&c)
    };
    let cap = capacity::search(
        slo,
        &cfg.target.url,
        0.03,
        10,
        || step(None),
        |r| step(Some(r)),
        |s: &capacity::Step| {
            if !json {
                let rate = s.rate.map_or("closed loop".to_string(), |r| format!("{r:.0} req/s"));
                let got = text::dur(slo.measured(&s.result.latency_us));
                println!(
                    "  {rate:>14}: {:>9.0} req/s sent, p{} {got:>9}  {}",
                    s.result.rps,
                    slo.percentile,
                    if s.passed { "ok" } else { &s.reason }
                );
            }
        },
    )?;
    cfg.rate = None;
    if json {
        println!("{}", serde_json::to_string_pretty(&cap)?);
    } else {
        println!(
            "Highest rate meeting {}: {:.0} req/s (closed loop flat out: {:.0} req/s)",
            slo.label(),
            cap.max_rate,
            cap.closed_loop_rps
        );
    }
    Ok(0)
}

/// Ctrl-C or SIGTERM end the run early; the results so far are still printed.
pub(super) fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, flag.clone()).context("cannot install the Ctrl-C handler")?;
    }
    Ok(flag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args as _;

    /// Flags of `stampede load` that are not part of the load: how to run
    /// it (output, capacity search, a load host's start). Every other
    /// flag must be a field of the load spec.
    const NOT_THE_LOAD: [&str; 9] =
        ["spec", "print_spec", "json", "find_max", "slo", "start_at", "exit_on_stdin_eof", "quiet", "help"];

    #[test]
    fn every_flag_is_a_field_of_the_load_spec_or_named_as_not_the_load() {
        let fields = serde_json::to_value(LoadSpec {
            urls: vec!["u".into()],
            headers: vec!["h: v".into()],
            body: Some(Body::Bytes(b"b".to_vec())),
            targets: Some("t".into()),
            seed: Some(1),
            max_connections: Some(1),
            duration: Some(Duration::from_secs(1)),
            requests: Some(1),
            rate: Some(1.0),
            ca: Some("c".into()),
            alpn: vec!["h2".into()],
            hdr_log: Some("l".into()),
            stages: Some("1s:1".into()),
            // Written only when set, so that older readers see no new field.
            http3: true,
            grpc: Some(Default::default()),
            requests_per_connection: Some(10),
            max_granularity: Some(Duration::from_millis(4)),
            from_hosts: Some(HostsSpec {
                remote_path: Some("r".into()),
                ssh_config: Some("s".into()),
                ..HostsSpec::default()
            }),
            ..LoadSpec::default()
        })
        .unwrap();
        let hosts = &fields["from_hosts"];
        let grpc = serde_json::to_value(stampede_schema::grpc::GrpcSpec {
            proto: vec!["p".into()],
            import_paths: vec!["i".into()],
            protoset: Some("s".into()),
            data: Some("{}".into()),
            metadata: [("k".to_string(), "v".to_string())].into(),
            deadline: Some(Duration::from_secs(1)),
            ..Default::default()
        })
        .unwrap();
        let cmd = Args::augment_args(clap::Command::new("load"));
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            // --body-file is the spec's body, as "@FILE".
            let field = if id == "body_file" { "body" } else { id };
            assert!(
                fields.get(field).is_some()
                    || hosts.get(field).is_some()
                    || grpc.get(field).is_some()
                    || NOT_THE_LOAD.contains(&id),
                "--{id} is neither a LoadSpec field (nor one of its from_hosts) nor in NOT_THE_LOAD: add it to the \
                 spec (and Args::spec) so profiles, `stampede run` and load hosts get it too"
            );
        }
    }
}
