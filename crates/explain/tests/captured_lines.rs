//! The parsers against lines captured from the real runtimes on this project's
//! machines (testdata/capture.py records how): Go 1.26 gctrace, OpenJDK 17
//! unified logging with four collectors, Node.js 20 --trace-gc, and the
//! Python app's gc.callbacks log. Read stamps (`<mono_ns>\t`) are the times
//! capture.py read each line; `.exec` files hold the monotonic time before exec.

use std::path::PathBuf;

use stampede_explain::events::{go, jvm, node, parse_file, parse_text, Runtime};
use stampede_explain::Kind;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name)
}

fn exec_of(name: &str) -> u64 {
    std::fs::read_to_string(testdata(name)).unwrap().trim().parse().unwrap()
}

#[test]
fn go_gctrace_lines_give_two_pauses_and_a_mark_phase_per_cycle() {
    let c = go::parse_line("gc 1 @0.781s 0%: 0.60+0.46+0.006 ms clock, 1.2+0.16/0.62/0+0.013 ms cpu, 0->1->0 MB, 1 MB goal, 0 MB stacks, 0 MB globals, 2 P").unwrap();
    assert_eq!(
        (c.number, c.start_rel_ns, c.sweep_term_ns, c.mark_ns, c.mark_term_ns),
        (1, 781_000_000, 600_000, 460_000, 6_000)
    );
    assert!(go::parse_line("gc 1 @0.78s: bogus").is_none());
    assert!(go::parse_line("GC forced").is_none());

    let exec = exec_of("go-gctrace-gogc25.log.exec");
    let parsed = parse_file(&testdata("go-gctrace-gogc25.log"), Runtime::Go, Some(exec)).unwrap();
    assert_eq!(parsed.events.len(), 401 * 3);
    let first = &parsed.events[0];
    assert!(first.stopped && first.label.starts_with("gc 1: sweep termination"));
    assert_eq!(first.duration_ns(), 600_000);
    assert!(!parsed.events[1].stopped, "the mark phase runs beside the application");
    // Read stamps put the runtime's start 5.9 ms after the pre-spawn exec time
    // (measured when the fixture was captured), to within the 1 ms of `@`.
    let origin = first.start_mono_ns - 781_000_000;
    assert!(origin > exec && origin - exec < 10_000_000, "origin {} ms after exec", (origin - exec) as f64 / 1e6);
    assert!(parsed.clock_error_ns <= 600_000, "±{} ns", parsed.clock_error_ns);
    // Each cycle ends before its line was read; the median line waited under
    // 2 ms in the pipe (the capturing Python reader shared two busy cores
    // with the server and the load, so a quarter waited over 3 ms).
    let text = std::fs::read_to_string(testdata("go-gctrace-gogc25.log")).unwrap();
    let mut waits = Vec::new();
    for (line, cycle) in text.lines().zip(parsed.events.chunks(3)) {
        let read: u64 = line.split_once('\t').unwrap().0.parse().unwrap();
        let end = cycle[2].end_mono_ns;
        assert!(end <= read, "{line}");
        waits.push(read - end);
        assert_eq!(cycle[0].end_mono_ns, cycle[1].start_mono_ns);
    }
    waits.sort_unstable();
    assert!(waits[waits.len() / 2] < 2_000_000, "median wait {} ns", waits[waits.len() / 2]);
}

#[test]
fn go_without_read_stamps_needs_the_exec_anchor() {
    let text = "gc 1 @0.781s 0%: 0.60+0.46+0.006 ms clock, 1.2+0.16/0.62/0+0.013 ms cpu, 0->1->0 MB, 1 MB goal, 2 P\n";
    let err = parse_text(text, Runtime::Go, None, "gc.log").unwrap_err().to_string();
    assert!(err.contains("--exec-mono-ns"), "{err}");
    let parsed = parse_text(text, Runtime::Go, Some(1_000_000_000), "gc.log").unwrap();
    // Without a read time the cycle is placed in the middle of `@`'s millisecond.
    assert_eq!(parsed.events[0].start_mono_ns, 1_781_500_000);
    // GOGC=off prints no gctrace line: a quiet log is no error.
    assert!(parse_text("listening on :9009\n", Runtime::Go, None, "gc.log").unwrap().events.is_empty());
}

#[test]
fn jvm_decorations_and_safepoint_lines() {
    let line = jvm::parse_line("[0.374s][2370511233647ns][info][safepoint   ] Safepoint \"G1CollectForAllocation\", Time since last: 320706984 ns, Reaching safepoint: 4333 ns, Cleanup: 44542 ns, At safepoint: 3094519 ns, Total: 3143394 ns").unwrap();
    assert_eq!(line.time_mono_ns, 2370511233647);
    assert_eq!(line.tags, "safepoint");
    assert!(jvm::parse_line("no decorations here").is_none());
}

fn jvm(name: &str) -> Vec<stampede_explain::Event> {
    parse_file(&testdata(name), Runtime::Jvm, None).unwrap().events
}

#[test]
fn jvm_g1_safepoints_carry_their_pause() {
    let events = jvm("jvm-g1.log");
    assert_eq!(events.len(), 20);
    let e = &events[0];
    assert_eq!(e.kind, Kind::Gc);
    assert_eq!((e.start_mono_ns, e.end_mono_ns), (2370511233647 - 3143394, 2370511233647));
    assert!(
        e.label.contains("G1CollectForAllocation")
            && e.label.contains("GC(0) Pause Young (Normal) (G1 Evacuation Pause)"),
        "{}",
        e.label
    );
    assert!(!e.label.contains("->"), "heap figures are not part of the label");
    // Time to safepoint counts: the second pause took 16.7 ms, of which the GC itself 12.5.
    assert_eq!(events[1].duration_ns(), 16736136);
}

#[test]
fn jvm_serial_and_parallel_collections() {
    for (name, count, op) in
        [("jvm-serial.log", 40, "GenCollectForAllocation"), ("jvm-parallel.log", 19, "ParallelGCFailedAllocation")]
    {
        let events = jvm(name);
        assert_eq!(events.len(), count, "{name}");
        assert!(
            events
                .iter()
                .all(|e| e.kind == Kind::Gc && e.stopped && e.label.contains(op) && e.label.contains("Pause Young")),
            "{name}"
        );
    }
}

#[test]
fn jvm_zgc_short_pauses_other_safepoints_and_concurrent_phases() {
    let events = jvm("jvm-zgc.log");
    let stopped: Vec<_> = events.iter().filter(|e| e.stopped).collect();
    assert_eq!(stopped.len(), 21);
    assert!(stopped.iter().any(|e| e.label.contains("ZMarkStart") && e.label.contains("Pause Mark Start")));
    let other: Vec<_> = stopped.iter().filter(|e| e.kind == Kind::Safepoint).collect();
    assert_eq!(other.len(), 3, "CleanClassLoaderDataMetaspaces is not a collection");
    assert_eq!(events.iter().filter(|e| !e.stopped).count(), 35);
}

#[test]
fn jvm_gc_lines_alone_without_safepoint_logging() {
    let text = "[0.374s][2370511215636ns][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->2M(64M) 3.039ms\n\
                [0.371s][2370508178516ns][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)\n";
    let events = parse_text(text, Runtime::Jvm, None, "gc.log").unwrap().events;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].duration_ns(), 3_039_000);
}

#[test]
fn node_scavenges_and_mark_compacts() {
    let c = node::parse_line("[23936:0x448fdcb0]      644 ms: Scavenge 4.6 (4.7) -> 4.2 (5.7) MB, 1.07 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;").unwrap();
    assert_eq!((c.end_rel_ns, c.kind.as_str(), c.pause_ns), (644_000_000, "Scavenge", 1_070_000));
    let exec = exec_of("node-trace-gc.log.exec");
    let parsed = parse_file(&testdata("node-trace-gc.log"), Runtime::Node, Some(exec)).unwrap();
    assert_eq!(parsed.events.len(), 150);
    let origin = parsed.events[0].end_mono_ns - 644_000_000;
    // Node's isolate clock started 157 ms after exec when this was captured.
    assert!(origin > exec + 100_000_000 && origin < exec + 200_000_000);
    let mc = parse_file(&testdata("node-trace-gc-mark-compact.log"), Runtime::Node, None).unwrap();
    let last = mc.events.last().unwrap();
    assert!(last.label.starts_with("Mark-Compact 4.74 ms"), "{}", last.label);
    assert_eq!(last.duration_ns(), 4_740_000);
}

#[test]
fn python_gc_callbacks_pairs() {
    let events = parse_file(&testdata("python-gc-aggressive.log"), Runtime::Python, None).unwrap().events;
    assert_eq!(events.len(), 28);
    assert_eq!((events[0].start_mono_ns, events[0].end_mono_ns), (2413232317129, 2413232365090));
    assert_eq!(events[0].label, "gc.collect generation 0");
}
