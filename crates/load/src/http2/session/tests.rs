//! Unit tests of one connection's protocol state (`http2::session`): what the
//! server's frames do to the streams in flight, read whole or byte by byte.

use super::*;
use crate::http2::frame::{self as frame, head};

fn frame_bytes(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    head(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

/// A session with `n` GET streams (ids 1, 3, ...) and `body` as the body.
fn session(n: usize, body: &[u8]) -> (Session, Vec<Vec<u8>>) {
    let mut s = Session::new();
    let bodies = vec![body.to_vec()];
    let now = Instant::now();
    for _ in 0..n {
        s.open(b"\x82\x86\x84", &bodies, 0, Slot::new(now, now, None));
    }
    (s, bodies)
}

fn feed(s: &mut Session, bodies: &[Vec<u8>], bytes: &[u8], read: usize) -> Result<Vec<(u32, String)>, ProtocolError> {
    let mut ended = Vec::new();
    for chunk in bytes.chunks(read) {
        s.receive(chunk, bodies, &mut ended)?;
    }
    Ok(ended
        .into_iter()
        .map(|(slot, how)| {
            let how = match how {
                Ended::Response(status) => status.to_string(),
                Ended::Reset => "reset".into(),
                Ended::Unprocessed => "unprocessed".into(),
            };
            (slot.id, how)
        })
        .collect())
}

#[test]
fn responses_end_their_streams_whether_read_whole_or_byte_by_byte() {
    // 200 indexed; 404 as a literal with incremental indexing, then the
    // same 404 from the dynamic table (index 62): the decoder must keep up.
    let mut server = frame_bytes(frame::SETTINGS, 0, 0, &[]);
    server.extend(frame_bytes(frame::HEADERS, frame::END_HEADERS, 1, b"\x88"));
    server.extend(frame_bytes(frame::DATA, frame::END_STREAM | frame::PADDED, 1, b"\x02ok\0\0"));
    server.extend(frame_bytes(0xee, 0, 3, b"unknown frame types are ignored"));
    server.extend(frame_bytes(frame::HEADERS, frame::END_STREAM, 3, b"\x48"));
    server.extend(frame_bytes(frame::CONTINUATION, frame::END_HEADERS, 3, b"\x03404"));
    server.extend(frame_bytes(frame::HEADERS, frame::END_HEADERS | frame::END_STREAM, 5, b"\xbe"));
    for read in [server.len(), 1, 7] {
        let (mut s, bodies) = session(3, b"");
        let ended = feed(&mut s, &bodies, &server, read).unwrap();
        assert_eq!(ended, vec![(1, "200".into()), (3, "404".into()), (5, "404".into())], "reads of {read}");
        assert!(s.slots.is_empty());
    }
}

#[test]
fn reset_and_goaway_end_only_their_streams() {
    let (mut s, bodies) = session(3, b"");
    let mut server = frame_bytes(frame::RST_STREAM, 0, 3, &8u32.to_be_bytes());
    server.extend(frame_bytes(frame::GOAWAY, 0, 0, &[0, 0, 0, 3, 0, 0, 0, 0]));
    let ended = feed(&mut s, &bodies, &server, server.len()).unwrap();
    assert_eq!(ended, vec![(3, "reset".into()), (5, "unprocessed".into())]);
    assert_eq!(s.slots.len(), 1, "stream 1 is below the GOAWAY's last id and goes on");
    assert!(s.goaway && !s.can_open(10));
}

#[test]
fn settings_are_acknowledged_and_limit_new_streams() {
    let (mut s, bodies) = session(0, b"");
    s.out.clear();
    let settings = frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 2]);
    feed(&mut s, &bodies, &settings, 4).unwrap();
    assert_eq!(s.out, frame_bytes(frame::SETTINGS, frame::ACK, 0, &[]));
    assert!(s.can_open(10));
    let now = Instant::now();
    s.open(b"\x82", &bodies, 0, Slot::new(now, now, None));
    s.open(b"\x82", &bodies, 0, Slot::new(now, now, None));
    assert!(!s.can_open(10), "SETTINGS_MAX_CONCURRENT_STREAMS is respected");
}

#[test]
fn a_body_waits_for_the_servers_window() {
    let body = vec![7u8; 100_000];
    let (mut s, bodies) = session(1, &body);
    let sent = |s: &Session| {
        let mut at = frame::PREFACE.len();
        let mut data = 0;
        while let Some((f, n)) = frame::parse(&s.out[at..]).unwrap() {
            if f.kind == frame::DATA {
                data += f.payload.len();
            }
            at += n;
        }
        data
    };
    assert_eq!(sent(&s), 65_535, "the default window");
    let mut update = frame_bytes(frame::WINDOW_UPDATE, 0, 0, &100_000u32.to_be_bytes());
    update.extend(frame_bytes(frame::WINDOW_UPDATE, 0, 1, &100_000u32.to_be_bytes()));
    feed(&mut s, &bodies, &update, 5).unwrap();
    assert_eq!(sent(&s), 100_000);
}

#[test]
fn protocol_errors_are_reported() {
    let mut interrupted = frame_bytes(frame::HEADERS, 0, 1, b"\x88");
    interrupted.extend(frame_bytes(0xee, 0, 1, b""));
    for bad in [
        interrupted,
        frame_bytes(frame::PUSH_PROMISE, frame::END_HEADERS, 1, &[0, 0, 0, 2, 0x88]),
        frame_bytes(frame::CONTINUATION, frame::END_HEADERS, 1, b"\x88"),
        frame_bytes(frame::HEADERS, frame::END_HEADERS | frame::END_STREAM, 1, b"\xff\xff\xff\xff\x0f"),
        frame_bytes(frame::HEADERS, frame::END_HEADERS | frame::END_STREAM, 1, b""),
    ] {
        let (mut s, bodies) = session(1, b"");
        assert!(feed(&mut s, &bodies, &bad, bad.len()).is_err(), "{bad:?}");
    }
}

#[test]
fn an_endless_header_block_is_a_protocol_error_past_64_kib() {
    let (mut s, bodies) = session(1, b"");
    let mut server = frame_bytes(frame::HEADERS, 0, 1, &[0u8; 16_384]);
    for _ in 0..3 {
        server.extend(frame_bytes(frame::CONTINUATION, 0, 1, &[0u8; 16_384]));
    }
    assert!(feed(&mut s, &bodies, &server, server.len()).is_ok(), "64 KiB is allowed");
    let more = frame_bytes(frame::CONTINUATION, 0, 1, &[0u8; 1]);
    let err = feed(&mut s, &bodies, &more, more.len()).unwrap_err();
    assert!(err.0.contains("64 KiB"), "{}", err.0);
}

#[test]
fn a_server_allowing_no_streams_is_said_and_one_allowing_some_is_not() {
    let (mut s, bodies) = session(0, b"");
    let some = frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]);
    assert!(feed(&mut s, &bodies, &some, some.len()).is_ok());
    let none = frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 0]);
    assert_eq!(feed(&mut s, &bodies, &none, none.len()).unwrap_err().0, NO_STREAMS);
}

#[test]
fn a_grpc_streams_messages_are_timed_first_then_by_gap_and_those_of_one_read_are_0_apart() {
    let mut s = Session::carrying(true);
    let bodies = vec![Vec::new()];
    let t0 = Instant::now();
    s.open(b"\x82\x86\x84", &bodies, 0, Slot::new(t0, t0, None));
    let message = [0u8, 0, 0, 0, 0];
    let mut ended = Vec::new();
    let two = frame_bytes(frame::DATA, 0, 1, &[message, message].concat());
    s.rx_at = t0 + std::time::Duration::from_millis(5);
    s.receive(&two, &bodies, &mut ended).unwrap();
    assert_eq!(s.slots[0].call.first_message, Some(s.rx_at));
    assert_eq!(s.gaps.iter().map(|g| (g.ns, g.n)).collect::<Vec<_>>(), [(0, 1)], "two in one read: one gap of 0");
    s.gaps.clear();
    let one = frame_bytes(frame::DATA, 0, 1, &message);
    s.rx_at = t0 + std::time::Duration::from_millis(12);
    s.receive(&one, &bodies, &mut ended).unwrap();
    assert_eq!(s.gaps.iter().map(|g| (g.ns, g.n)).collect::<Vec<_>>(), [(7_000_000, 1)]);
    assert_eq!(s.slots[0].call.messages, 3);
    assert_eq!(s.slots[0].call.first_message, Some(t0 + std::time::Duration::from_millis(5)), "the first stays");
    let mut unary = Session::new();
    unary.open(b"\x82\x86\x84", &bodies, 0, Slot::new(t0, t0, None));
    unary.receive(&two, &bodies, &mut ended).unwrap();
    assert!(unary.gaps.is_empty(), "HTTP bodies are not messages");
}
