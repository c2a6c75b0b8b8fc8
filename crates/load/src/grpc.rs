//! A gRPC load's results. The spec's `grpc` field becomes one POST to
//! `/package.Service/Method` with the request message encoded once in the
//! spec crate (`stampede_spec::grpc`); the HTTP/2 loop sends it and judges
//! each answer by its `grpc-status` (`http2::session`, `core::grpc_tally`),
//! and here the merged tally becomes the `grpc` section of the result.

use crate::core::grpc_tally::GrpcTally;
use stampede_grpc::Code;
use stampede_schema::grpc::GrpcStats;
use stampede_schema::load::Percentiles;

pub use stampede_spec::grpc::GrpcCall;

/// The `grpc` section of `stampede.load/1` from the merged tally.
pub fn stats(call: &GrpcCall, tally: Option<&GrpcTally>, wall_s: f64) -> GrpcStats {
    let mut out = GrpcStats {
        call: call.name.clone(),
        server_streaming: call.server_streaming,
        client_streaming: call.client_streaming,
        request_messages: call.client_streaming.then_some(call.request_messages),
        schema: call.schema.to_string(),
        ..Default::default()
    };
    let Some(t) = tally else { return out };
    for (code, n) in Code::ALL.iter().zip(t.codes).filter(|(_, n)| *n > 0) {
        out.calls_by_status.insert(code.name().to_string(), n);
    }
    out.not_grpc = t.not_grpc;
    out.no_status = t.no_status;
    out.messages = t.messages;
    out.messages_per_s = if wall_s > 0.0 { t.messages as f64 / wall_s } else { 0.0 };
    let of = |h: &hdrhistogram::Histogram<u64>| (call.server_streaming && !h.is_empty()).then(|| Percentiles::of(h));
    out.first_message_us = of(&t.first_message);
    out.message_gap_us = of(&t.gaps);
    out
}
