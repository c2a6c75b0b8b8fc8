//! A gRPC call recorded: the HTTP/2 loop hands each ended stream to
//! [`Recorder::call`], which records it as a response (latency, slow log,
//! timeline, stages), judged bad unless it is a gRPC answer whose
//! `grpc-status` is OK, and counts it in the thread's [`GrpcTally`], as
//! [`Recorder::gaps`] does the gaps between a stream's messages as they
//! come. Apart from the tally (`grpc_tally`) so the tally needs nothing of
//! the recorder.

use crate::core::grpc_tally::{CallEnd, Gaps, GrpcTally};
use crate::core::recorder::{Origin, Recorder};
use std::time::Instant;

impl Recorder {
    /// A gRPC call that ended at `end`: recorded as a response, bad unless
    /// OK, and tallied; its latency when it falls in the measured period.
    pub fn call(
        &mut self,
        (intended, start, end): (Instant, Instant, Instant),
        http_status: u16,
        call: &CallEnd,
        from: Origin,
    ) -> Option<u64> {
        let latency = self.answer(intended, start, end, http_status, !call.ok(http_status), from)?;
        self.grpc.get_or_insert_with(|| Box::new(GrpcTally::new())).count(http_status, call, intended);
        Some(latency)
    }

    /// Gaps between messages a read found, those of calls counted in the
    /// measured period (by intended send time, as the calls are).
    pub fn gaps(&mut self, gaps: &[Gaps]) {
        for g in gaps {
            if self.measuring(self.counted_at(g.intended)) {
                let tally = self.grpc.get_or_insert_with(|| Box::new(GrpcTally::new()));
                let _ = tally.gaps.record_n(g.ns.min(tally.gaps.high()), u64::from(g.n));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_grpc::Code;
    use std::sync::Arc;
    use std::time::Duration;

    fn recorder() -> Recorder {
        Recorder::new(Instant::now(), None, 0, Arc::new(crate::core::timeline::Timeline::default()), false)
    }

    #[test]
    fn a_call_counts_as_success_only_with_status_ok_in_a_grpc_answer() {
        let mut rec = recorder();
        let t = Instant::now();
        let times = (t, t, t + Duration::from_millis(1));
        let from = Origin { connection: 0, ready: t, connecting: false };
        let ok = CallEnd { code: Some(Code::Ok), grpc_type: true, messages: 1, ..Default::default() };
        let internal = CallEnd { code: Some(Code::Internal), ..ok };
        let no_status = CallEnd { code: None, ..ok };
        let html = CallEnd { code: None, grpc_type: false, messages: 0, ..ok };
        let truncated = CallEnd { broken: true, ..ok };
        for (call, status) in
            [(ok, 200), (ok, 200), (internal, 200), (no_status, 200), (html, 200), (ok, 503), (truncated, 200)]
        {
            rec.call(times, status, &call, from);
        }
        let g = rec.grpc.as_ref().unwrap();
        assert_eq!(g.codes[0], 2, "OK");
        assert_eq!(g.codes[Code::Internal.number() as usize], 1);
        assert_eq!((g.not_grpc, g.no_status), (2, 2), "HTML and a 503 are not gRPC; no status and truncated");
        assert_eq!(rec.requests, 7);
        assert_eq!(rec.errors.status, 5, "every call but the two OK ones is bad");
        assert_eq!(g.messages, 5, "the 503's body is not a message");
    }

    #[test]
    fn gaps_count_for_calls_meant_in_the_measured_period_only() {
        let t = Instant::now();
        let mut rec = Recorder::new(t + Duration::from_secs(1), None, 0, Arc::new(Default::default()), false);
        let before = Gaps { intended: t, ns: 5_000, n: 1 };
        let during = Gaps { intended: t + Duration::from_secs(2), ns: 0, n: 3 };
        rec.gaps(&[before]);
        assert!(rec.grpc.is_none(), "a warm-up call's gaps are not kept");
        rec.gaps(&[during, Gaps { ns: 7_000, n: 1, ..during }, before]);
        let gaps = &rec.grpc.as_ref().unwrap().gaps;
        assert_eq!(gaps.len(), 4, "three of 0 and one of 7 µs");
        assert!(gaps.equivalent(gaps.max(), 7_000) && gaps.min() == 0);
    }
}
