//! How a gRPC call is judged and counted. A failed call is an HTTP 200
//! whose trailers say otherwise, so the HTTP/2 loop hands each ended stream
//! on with what its header blocks and DATA said ([`CallEnd`]): the call is
//! recorded as a response (`grpc_call`) and judged bad unless it is a gRPC
//! answer whose `grpc-status` is OK; the tally here keeps
//! calls per status code, answers that were not a gRPC server's, and the
//! messages received, with the time to the first one and the gaps between
//! them for streams.

use hdrhistogram::Histogram;
use stampede_grpc::Code;
use stampede_schema::histogram::new_histogram;
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
    /// When the last message so far was complete (the next one's gap
    /// counts from it).
    pub last_message: Option<Instant>,
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
    /// Between consecutive messages of a call (streams), in nanoseconds.
    pub gaps: Histogram<u64>,
}

/// `n` gaps of `ns` between the messages of the call meant for `intended`,
/// as a read found them: the HTTP/2 session queues them, the loop records
/// those of measured calls (`Recorder::gaps`) after the read.
#[derive(Debug, Clone, Copy)]
pub struct Gaps {
    pub intended: Instant,
    pub ns: u64,
    pub n: u32,
}

impl GrpcTally {
    pub fn new() -> GrpcTally {
        GrpcTally {
            codes: [0; Code::ALL.len()],
            not_grpc: 0,
            no_status: 0,
            messages: 0,
            first_message: new_histogram(),
            gaps: new_histogram(),
        }
    }

    pub fn add(&mut self, o: &GrpcTally) {
        self.codes.iter_mut().zip(o.codes).for_each(|(a, b)| *a += b);
        self.not_grpc += o.not_grpc;
        self.no_status += o.no_status;
        self.messages += o.messages;
        self.first_message.add(&o.first_message).expect("same histogram bounds");
        self.gaps.add(&o.gaps).expect("same histogram bounds");
    }

    pub(crate) fn count(&mut self, http_status: u16, call: &CallEnd, intended: Instant) {
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
