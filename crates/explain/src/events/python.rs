//! The Python reference app's collector log (`apps/python/collector.py`):
//! with `STAMPEDE_GC_LOG=path` every serving process appends
//! `<start|stop> <generation> <time.monotonic_ns()>` to `path.<pid>` from
//! `gc.callbacks`. CPython's collector runs on the thread that triggered it
//! and holds the GIL, so each start/stop pair is a pause of the event loop,
//! already on CLOCK_MONOTONIC.

use super::{log_lines, Parsed};
use crate::event::{Event, Kind};

pub fn parse(text: &str) -> Parsed {
    let mut events = Vec::new();
    let mut open: Option<(u32, u64)> = None;
    for line in log_lines(text) {
        let mut fields = line.text.split_whitespace();
        let (Some(phase), Some(generation), Some(time), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (Ok(generation), Ok(time)) = (generation.parse::<u32>(), time.parse::<u64>()) else { continue };
        match phase {
            "start" => open = Some((generation, time)),
            "stop" => {
                if let Some((gen, start)) = open.take().filter(|&(gen, start)| gen == generation && start <= time) {
                    events.push(Event {
                        start_mono_ns: start,
                        end_mono_ns: time,
                        kind: Kind::Gc,
                        label: format!("gc.collect generation {gen}"),
                        stopped: true,
                        error_ns: 0,
                        owner: None,
                    });
                }
            }
            _ => {}
        }
    }
    Parsed { events, clock: "gc.callbacks times from time.monotonic_ns() (CLOCK_MONOTONIC)".into(), clock_error_ns: 0 }
}
