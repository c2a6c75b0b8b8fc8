//! What the controller and `stampede agent` say to each other over one ssh
//! session: newline-delimited JSON, one message a line. The controller writes
//! a [`Request`] as the first line, then [`Command`]s; the agent answers with
//! [`Event`]s. A closed stdin means "stop everything and exit", so a
//! controller that dies or loses its connection still stops the server.
//! Every message carries its kind in a tag (`"action"`, `"cmd"`, `"event"`)
//! so an unknown one is a clear decode error rather than a silent mismatch.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::scenario::manifest::Manifest;
use crate::server::ready::ReadyCheck;
use crate::server::served::{Finished, Readiness};

/// The protocol's version; the agent refuses a request of another (3: the
/// measured phase's end is marked, `measure_end`).
pub const VERSION: u32 = 3;

/// The first line the controller sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub version: u32,
    #[serde(flatten)]
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Say hello (host facts) and exit: checks the agent runs at all.
    Describe,
    /// Check the app's tools, run its build, ask its version.
    Prepare { app: App, build: bool },
    /// Start the server and probe it until told to finish or stop.
    Serve(Serve),
}

/// An app's manifest and the folder its commands run in on the server's host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct App {
    pub manifest: Manifest,
    pub dir: PathBuf,
}

impl App {
    /// The manifest with its folder set, as the local code expects it.
    pub fn manifest(&self) -> Manifest {
        let mut m = self.manifest.clone();
        m.dir = self.dir.clone();
        m
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Serve {
    pub app: App,
    /// The knob combination's environment and `run` arguments.
    pub env: BTreeMap<String, String>,
    pub args: String,
    /// 0: the agent picks a free port on its host.
    pub port: u16,
    pub cpus: Option<String>,
    pub start_timeout_ms: u64,
    pub stop_grace_ms: u64,
    pub sample_interval_ms: u64,
    /// When the server counts as started (resolved by the controller).
    pub ready: ReadyCheck,
}

/// The lines after the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// The warmup starts now.
    Warmup,
    /// The measured phase starts now.
    Measure,
    /// The measured phase ends now (a latency phase follows on the same server).
    MeasureEnd,
    /// The load is over: report and stop.
    Finish,
    /// Stop the server now (as a closed stdin does).
    Stop,
}

/// The agent's lines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Always the first line.
    Hello(Host),
    Prepared {
        build_time_ms: f64,
        runtime_version: String,
    },
    /// The server was started; its process group is `pgid`.
    Started {
        port: u16,
        pgid: i32,
    },
    Ready(Readiness),
    /// The answer to `measure`: the host's CLOCK_MONOTONIC at the mark, so
    /// the controller can put the host's event times on its own clock.
    Measuring {
        mono_ns: u64,
    },
    /// The server exited by itself (once, when first seen).
    Exited {
        status: String,
        tail: String,
    },
    /// The probe's figures and the runtime events, after `finish`.
    Report(Box<Finished>),
    /// The server and its whole process tree are gone; the last of its log.
    Stopped {
        log: String,
    },
    /// The request failed; for `serve` the run is invalid for this reason.
    Failed {
        reason: String,
    },
}

/// Facts about the server's host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub version: String,
    pub cores: usize,
    pub cpu_model: String,
    pub kernel: String,
}

impl Host {
    pub fn here() -> Host {
        Host {
            version: env!("CARGO_PKG_VERSION").to_string(),
            cores: stampede_probe::machine_cores(),
            cpu_model: stampede_probe::cpu_model(),
            kernel: stampede_probe::kernel(),
        }
    }
}

/// One message as one line (without the newline).
pub fn encode<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).expect("protocol messages always serialise")
}

/// One line back into a message; the error says what the line was.
pub fn decode<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, String> {
    serde_json::from_str(line.trim()).map_err(|e| {
        let shown: String = line.trim().chars().take(120).collect();
        format!("not a stampede agent message ({e}): {shown:?}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        let manifest: Manifest =
            toml::from_str("name = \"py\"\nrun = \"exec python3 s.py\"\nbuild = \"true\"\n").unwrap();
        App { manifest, dir: "/srv/apps/py".into() }
    }

    #[test]
    fn every_message_survives_a_round_trip() {
        let serve = Request {
            version: VERSION,
            action: Action::Serve(Serve {
                app: app(),
                env: BTreeMap::from([("THREADS".into(), "2".into())]),
                args: "--x".into(),
                port: 0,
                cpus: Some("0".into()),
                start_timeout_ms: 30_000,
                stop_grace_ms: 5_000,
                sample_interval_ms: 100,
                ready: crate::server::ready::ReadyCheck::ok_on("/api/count/1"),
            }),
        };
        for request in [serve, Request { version: VERSION, action: Action::Prepare { app: app(), build: true } }] {
            let line = encode(&request);
            assert!(!line.contains('\n'));
            assert_eq!(decode::<Request>(&line).unwrap(), request);
        }
        for cmd in [Command::Warmup, Command::Measure, Command::MeasureEnd, Command::Finish, Command::Stop] {
            assert_eq!(decode::<Command>(&encode(&cmd)).unwrap(), cmd);
        }
        let mut finished =
            Finished { crashed: Some("exit status: 3".into()), tail: "boom".into(), ..Default::default() };
        finished.report.server.cpu_cores_avg = 0.5;
        finished.report.server.rss_max_mib = 12.0;
        let events = [
            Event::Hello(Host::here()),
            Event::Started { port: 8080, pgid: 42 },
            Event::Ready(Readiness { start_time_ms: 12.5, first_request_ms: 0.4 }),
            Event::Measuring { mono_ns: 123_456_789 },
            Event::Exited { status: "exit status: 1".into(), tail: "a | b".into() },
            Event::Report(Box::new(finished)),
            Event::Stopped { log: "line\n".into() },
            Event::Failed { reason: "no".into() },
        ];
        for event in events {
            // The probe's summaries have no PartialEq: compare the lines.
            let line = encode(&event);
            let back: Event = decode(&line).unwrap();
            assert_eq!(encode(&back), line);
            assert_eq!(std::mem::discriminant(&back), std::mem::discriminant(&event));
        }
    }

    #[test]
    fn the_wire_format_is_tagged_and_stable() {
        assert_eq!(encode(&Command::Measure), r#"{"cmd":"measure"}"#);
        assert_eq!(encode(&Event::Started { port: 1, pgid: 2 }), r#"{"event":"started","port":1,"pgid":2}"#);
        let ready = encode(&Event::Ready(Readiness { start_time_ms: 1.0, first_request_ms: 2.0 }));
        assert_eq!(ready, r#"{"event":"ready","start_time_ms":1.0,"first_request_ms":2.0}"#);
        assert!(encode(&Request { version: 1, action: Action::Describe }).contains(r#""action":"describe""#));
    }

    #[test]
    fn garbage_is_a_clear_error() {
        let err = decode::<Event>("Welcome to host!").unwrap_err();
        assert!(err.starts_with("not a stampede agent message") && err.contains("Welcome"), "{err}");
        let err = decode::<Command>(r#"{"cmd":"dance"}"#).unwrap_err();
        assert!(err.contains("dance"), "{err}");
    }
}
