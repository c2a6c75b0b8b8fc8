//! Rules that need more than one request to judge: that a connection serves a
//! second request (keep-alive), that `Date` moves on from one second to
//! the next (a server that caches its `Date` forever passes every single
//! response's check but fails this one), and that two sleeps overlap (a
//! server whose event loop blocks while it sleeps answers each sleep right
//! yet serves nothing else meanwhile).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::client::{Client, Exchange};
use crate::headers::parse_date;
use crate::lenience::Lenience;
use crate::report::RuleResult;
use crate::report::RuleVerdict;
use crate::target::Target;

/// Slack after a second boundary before asking again, for clock jitter.
const SECOND_MARGIN: Duration = Duration::from_millis(150);
/// Second boundaries to wait across: the first catches a server that formats
/// the date per request, the second one that refreshes a cached date on its
/// own timer, whose phase is unknown.
const TICK_ATTEMPTS: u32 = 2;

/// Two requests on one new connection: the second must reuse it.
pub fn keep_alive(id: &str, target: &Target, path: &str, timeout: Duration, log: &mut Vec<Exchange>) -> RuleResult {
    let description = format!("a connection stays open for a second request (GET {path} twice on one connection)");
    let description = description.as_str();
    let mut client = Client::new(target.clone(), timeout);
    let first = client.get(path);
    let second = client.get(path);
    let result = match (first.response(), second.response()) {
        (None, _) => RuleResult::fail(id, description, "the first request got no response".into(), Some(&first)),
        (Some(r), _) if !r.keeps_alive() => RuleResult::fail(
            id,
            description,
            "the first response ends the connection (Connection: close, HTTP/1.0 without keep-alive, or an unframed body)"
                .into(),
            Some(&first),
        ),
        (_, None) => RuleResult::fail(id, description, "the second request got no response".into(), Some(&second)),
        (_, Some(r)) if !r.reused_connection => RuleResult::fail(
            id,
            description,
            "the server closed the connection after the first response without saying so".into(),
            Some(&first),
        ),
        _ => RuleResult::pass(id, description),
    };
    log.push(first);
    log.push(second);
    result
}

/// `Date` read now must differ from `Date` read after the next second boundary.
pub fn date_ticks(id: &str, client: &mut Client, path: &str, log: &mut Vec<Exchange>) -> RuleResult {
    let description = format!("Date changes from one second to the next (GET {path})");
    let description = description.as_str();
    let first = client.get(path);
    let start = match first.response().map(parse_date) {
        Some(Ok(date)) => date,
        Some(Err(reason)) => {
            let result = RuleResult::fail(id, description, format!("cannot compare dates: {reason}"), Some(&first));
            log.push(first);
            return result;
        }
        None => {
            let result = RuleResult::fail(id, description, "the request got no response".into(), Some(&first));
            log.push(first);
            return result;
        }
    };
    let start_text = first.response().and_then(|r| r.header("date")).unwrap_or_default();
    log.push(first);
    let mut attempt = 0;
    loop {
        attempt += 1;
        sleep_past_next_second();
        let later = client.get(path);
        let verdict = match later.response().map(parse_date) {
            Some(Ok(date)) if date > start => Ok(()),
            Some(Ok(date)) if date < start => Err(format!("Date went backwards from {start_text:?}")),
            Some(Ok(_)) if attempt < TICK_ATTEMPTS => {
                log.push(later);
                continue;
            }
            Some(Ok(_)) => Err(format!("Date stayed {start_text:?} across {TICK_ATTEMPTS} second boundaries")),
            Some(Err(reason)) => Err(format!("cannot compare dates: {reason}")),
            None => Err("the request got no response".into()),
        };
        let result = crate::report::judged(id, description, verdict, &Lenience::new(&[]), &later);
        log.push(later);
        return result;
    }
}

/// Sleeps until just after the next whole second of the local clock.
fn sleep_past_next_second() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let to_boundary = Duration::from_secs(1) - Duration::from_nanos(u64::from(now.subsec_nanos()));
    std::thread::sleep(to_boundary + SECOND_MARGIN);
}

/// Two `GET path` (a sleep) sent at once on two connections: both answers
/// must be back before two sleeps one after the other could be, i.e. the
/// two overlapped.
pub fn sleep_concurrent(
    id: &str,
    target: &Target,
    path: &str,
    timeout: Duration,
    log: &mut Vec<Exchange>,
) -> RuleResult {
    let description = format!("two sleeps on two connections overlap (GET {path} twice at once)");
    let description = description.as_str();
    let sleep = stampede_contract::sleep_of(path).expect("validated when the contract was read");
    let start = std::sync::Barrier::new(2);
    let started = Instant::now();
    let (first, second) = std::thread::scope(|scope| {
        let ask = || {
            let mut client = Client::new(target.clone(), timeout.max(sleep * 3));
            start.wait();
            client.get(path)
        };
        let one = scope.spawn(ask);
        let two = scope.spawn(ask);
        (one.join().expect("probe thread"), two.join().expect("probe thread"))
    });
    let both_back = started.elapsed();
    let result = match (first.response(), second.response()) {
        (None, _) => RuleResult::fail(id, description, "the first request got no response".into(), Some(&first)),
        (_, None) => RuleResult::fail(id, description, "the second request got no response".into(), Some(&second)),
        (Some(r), _) if r.status != 200 => RuleResult::fail(id, description, format!("the sleep answered {}", r.status_line()), Some(&first)),
        _ if both_back >= sleep * 2 => RuleResult::fail(
            id,
            description,
            format!(
                "the server handled the two sleeps one after another (both back only after {}, two sleeps of {}): its event loop blocks while it sleeps",
                stampede_grpc::short_duration(both_back),
                stampede_grpc::short_duration(sleep)
            ),
            Some(&second),
        ),
        _ => RuleResult::pass(id, description),
    };
    log.push(first);
    log.push(second);
    result
}
