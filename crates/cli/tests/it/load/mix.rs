//! Request mixes through the real binary: several URLs, URL templates and
//! targets files, checked against what a server that records every request
//! read (method, path, headers, body), on both HTTP/1.1 engines and in
//! closed, open and pipelined loops.

use stampede_testkit::hostile;
use stampede_testkit::load;
use stampede_testkit::proto;

use hostile::{Hostile, Trick};
use load::{load_json, stampede};
use proto::h2_server::{Behaviour, H2Server};
use std::collections::BTreeMap;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn hits(srv: &Hostile) -> BTreeMap<String, u64> {
    let mut hits = BTreeMap::new();
    for r in srv.log() {
        *hits.entry(r.path).or_insert(0) += 1;
    }
    hits
}

#[test]
fn round_robin_hits_every_target_equally_in_every_loop() {
    for (engine, extra) in [
        ("epoll", vec!["-n", "3000", "-c", "4"]),
        ("io-uring", vec!["-n", "3000", "-c", "4"]),
        ("io-uring", vec!["-n", "3000", "-c", "2", "--pipeline", "8"]),
        ("epoll", vec!["-n", "3000", "-c", "2", "--pipeline", "8"]),
    ] {
        let srv = Hostile::start(Trick::None);
        let mut args = vec!["--engine", engine];
        args.extend(&extra);
        let urls = [srv.url("/a"), srv.url("/b"), srv.url("/c")];
        args.extend(urls.iter().map(String::as_str));
        let r = load_json(&args, DEADLINE);
        assert_eq!(r["requests"], 3000, "{engine} {extra:?}");
        let h = hits(&srv);
        assert_eq!(h.values().copied().collect::<Vec<_>>(), [1000, 1000, 1000], "{engine} {extra:?}: {h:?}");
        let targets = r["targets"].as_array().unwrap();
        assert_eq!(targets.iter().map(|t| t["requests"].as_u64().unwrap()).sum::<u64>(), 3000);
        assert_eq!(targets[0]["name"], "GET /a");
    }
    // Open loop: each target equally, within one request per connection.
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["--rate", "300", "-d", "1s", "-c", "4", &srv.url("/a"), &srv.url("/b")], DEADLINE);
    let h = hits(&srv);
    let (a, b) = (h["/a"], h["/b"]);
    assert!(a.abs_diff(b) <= 4, "{h:?}");
    assert_eq!(r["requests"].as_u64(), Some(a + b));
}

#[test]
fn a_sequence_template_counts_in_order_and_starts_again() {
    let srv = Hostile::start(Trick::None);
    load_json(&["-n", "12", "-c", "1", &srv.url("/api/fib/{1..5}")], DEADLINE);
    let paths: Vec<String> = srv.log().into_iter().map(|r| r.path).collect();
    let want: Vec<String> = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2].iter().map(|n| format!("/api/fib/{n}")).collect();
    assert_eq!(paths, want);
}

#[test]
fn weights_3_to_1_give_3_to_1_and_a_seed_repeats_the_choices() {
    let run = |seed: &str| {
        let srv = Hostile::start(Trick::None);
        let file = std::env::temp_dir().join(format!("stampede-mix-w-{}-{seed}", std::process::id()));
        std::fs::write(
            &file,
            format!("GET {} weight=3\nGET {}\n", srv.url("/heavy"), srv.url("/light/{rand:1..1000000}")),
        )
        .unwrap();
        let r = load_json(
            &["--targets", file.to_str().unwrap(), "--order", "random", "--seed", seed, "-n", "10000", "-c", "1"],
            DEADLINE,
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(r["mix"]["seed"].as_u64().unwrap().to_string(), seed);
        assert_eq!(r["mix"]["order"], "random");
        srv.log().into_iter().map(|r| r.path).collect::<Vec<_>>()
    };
    let a = run("42");
    let heavy = a.iter().filter(|p| *p == "/heavy").count() as f64 / a.len() as f64;
    assert!((heavy - 0.75).abs() < 0.02, "share of the weight-3 target: {heavy}");
    let distinct: std::collections::HashSet<_> = a.iter().filter(|p| p.starts_with("/light/")).collect();
    assert!(distinct.len() > 2000, "{{rand:1..1000000}} varies: {} distinct", distinct.len());
    assert_eq!(a, run("42"), "the same seed sends the same requests in the same order");
    assert_ne!(a, run("43"));
}

#[test]
fn methods_headers_and_bodies_arrive_byte_for_byte() {
    let srv = Hostile::start(Trick::None);
    let dir = std::env::temp_dir().join(format!("stampede-mix-b-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let binary: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    std::fs::write(dir.join("blob.bin"), &binary).unwrap();
    let file = dir.join("targets.txt");
    std::fs::write(
        &file,
        format!(
            "POST {}\nContent-Type: application/json\nX-Trace: t-1\nbody {{\"n\": 1}}\n\nPUT {} weight=2\n@blob.bin\n",
            srv.url("/items"),
            srv.url("/blobs/{a|b}")
        ),
    )
    .unwrap();
    for engine in ["epoll", "io-uring"] {
        let before = srv.log().len();
        let r = load_json(
            &["--engine", engine, "--targets", file.to_str().unwrap(), "-H", "X-All: yes", "-n", "30", "-c", "2"],
            DEADLINE,
        );
        assert_eq!(r["requests"], 30);
        let log = &srv.log()[before..];
        let posts: Vec<_> = log.iter().filter(|r| r.method == "POST").collect();
        let puts: Vec<_> = log.iter().filter(|r| r.method == "PUT").collect();
        assert_eq!((posts.len(), puts.len()), (10, 20), "{engine}: weights 1 and 2");
        for p in &posts {
            assert_eq!((p.path.as_str(), p.body.as_slice()), ("/items", b"{\"n\": 1}".as_slice()));
            assert_eq!(
                (p.header("content-type"), p.header("x-trace"), p.header("x-all")),
                (Some("application/json"), Some("t-1"), Some("yes"))
            );
        }
        for p in &puts {
            assert!(p.path == "/blobs/a" || p.path == "/blobs/b", "{}", p.path);
            assert_eq!(p.body, binary, "{engine}: the binary body arrived whole");
            assert_eq!(p.header("content-length"), Some("3000"));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_targets_name_the_file_and_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("stampede-mix-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let srv = Hostile::start(Trick::None);
    let cases = [
        ("unknown.txt", format!("GET {}\nFETCH {}\n", srv.url("/"), srv.url("/")), "unknown.txt:2: unknown method"),
        ("nobody.txt", format!("POST {}\n@missing.json\n", srv.url("/")), "nobody.txt:2: body file missing.json"),
        (
            "other.txt",
            format!("GET {}\nGET http://127.0.0.2:1/x\n", srv.url("/")),
            "other.txt:2: http://127.0.0.2:1/x is not on",
        ),
        ("empty.txt", String::new(), "empty.txt: no targets"),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = stampede(&["load", "--targets", path.to_str().unwrap(), "-n", "10"], DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{name}: {err}");
    }
    for (urls, want) in [
        (vec![srv.url("/a"), "http://127.0.0.2:1/b".to_string()], "URL argument 2: http://127.0.0.2:1/b is not on"),
        (vec![srv.url("/a"), srv.url("/a/{5..1}")], "URL argument 2: /a/{5..1}: {5..1}: HIGH must be at least LOW"),
    ] {
        let mut args = vec!["load", "-n", "10"];
        args.extend(urls.iter().map(String::as_str));
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
        assert!(err.contains(want), "{err}");
    }
    assert_eq!(srv.get(|s| &s.requests), 0, "nothing was sent");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn http2_sends_the_mix_and_counts_per_target() {
    let srv = H2Server::start(Behaviour::Ok, None);
    let (a, b) = (format!("{}a/{{1..3}}", srv.url("http")), format!("{}b", srv.url("http")));
    let r = load_json(&["--http2", "--streams", "4", "-c", "1", "-n", "200", &a, &b], DEADLINE);
    assert_eq!(r["requests"], 200);
    let per: Vec<u64> = r["targets"].as_array().unwrap().iter().map(|t| t["requests"].as_u64().unwrap()).collect();
    assert_eq!(per, [100, 100]);
    assert_eq!(r["targets"][0]["name"], "GET /a/{1..3}");
    proto::assert_documented(&r);
}
