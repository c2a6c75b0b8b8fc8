//! How a gRPC call is judged and counted. A failed call is an HTTP 200
//! whose trailers say otherwise, so the HTTP/2 loop hands each ended stream
//! here with what its header blocks and DATA said ([`CallEnd`]): the call is
//! recorded as a response (latency, slow log, timeline, stages) and judged
//! bad unless it is a gRPC answer whose `grpc-status` is OK; the tally keeps
//! calls per status code, answers that were not a gRPC server's, and the
//! messages received, with the time to the first one for streams.

use crate::core::recorder::{new_histogram, Origin, Recorder};
use hdrhistogram::Histogram;
use stampede_grpc::Code;
use std::time::Instant;

/// What one gRPC call's answer said, as the HTTP/2 session read it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallEnd {
    /// The `grpc-status` of the trailers (or of a Trailers-Only answer).
    pub code: Option<Code>,
    /// The answer's content-type was `application/grpc`.
    pub grpc_type: bool,
    pub messages: u32,
    /// When the first message was complete.
    pub first_message: Option<Instant>,
    /// The body ended inside a message, or broke gRPC's framing.
    pub broken: bool,
}

impl CallEnd {
    /// Whether a gRPC server answered (HTTP 200, gRPC content-type).
    pub fn is_grpc(&self, http_status: u16) -> bool {
        http_status == 200 && self.grpc_type
    }

    /// A call succeeded: a gRPC answer, whole, with status OK.
    pub fn ok(&self, http_status: u16) -> bool {
        self.is_grpc(http_status) && !self.broken && self.code == Some(Code::Ok)
    }
}

/// A thread's gRPC counts over the measured period.
pub struct GrpcTally {
    pub codes: [u64; Code::ALL.len()],
    pub not_grpc: u64,
    pub no_status: u64,
    pub messages: u64,
    /// From the intended send time to the first message (streams).
    pub first_message: Histogram<u64>,
}

impl GrpcTally {
    pub fn new() -> GrpcTally {
        GrpcTally {
            codes: [0; Code::ALL.len()],
            not_grpc: 0,
            no_status: 0,
            messages: 0,
            first_message: new_histogram(),
        }
    }

    pub fn add(&mut self, o: &GrpcTally) {
        self.codes.iter_mut().zip(o.codes).for_each(|(a, b)| *a += b);
        self.not_grpc += o.not_grpc;
        self.no_status += o.no_status;
        self.messages += o.messages;
        self.first_message.add(&o.first_message).expect("same histogram bounds");
    }

    fn count(&mut self, http_status: u16, call: &CallEnd, intended: Instant) {
        if !call.is_grpc(http_status) {
            // A web page's bytes are not messages.
            self.not_grpc += 1;
            return;
        }
        self.messages += u64::from(call.messages);
        if let Some(first) = call.first_message {
            let ns = first.saturating_duration_since(intended).as_nanos().max(1) as u64;
            self.first_message.saturating_record(ns);
        }
        match call.code {
            Some(code) if !call.broken => self.codes[code.number() as usize] += 1,
            _ => self.no_status += 1,
        }
    }
}

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
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
