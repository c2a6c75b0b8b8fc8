//! The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
//! ("gRPC") defines its answers: Unary echoes the text and adds the two
//! numbers, Stream sends the number of replies asked for, through a bounded
//! channel so a slow reader holds the sender back. Both end with
//! DEADLINE_EXCEEDED once the call's deadline has passed (`deadline`);
//! tonic's generated router answers UNIMPLEMENTED for unknown methods and
//! INTERNAL for a message that does not decode.

use std::pin::Pin;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::deadline::Deadline;
use crate::pb;

/// The largest count a Stream call may ask for (the contract's).
pub const MAX_STREAM: i32 = 100_000;

/// Replies a stream may have queued ahead of the connection.
const STREAM_BUFFER: usize = 64;

#[derive(Debug, Default)]
pub struct Bench;

type ReplyStream = Pin<Box<dyn Stream<Item = Result<pb::Reply, Status>> + Send>>;

#[tonic::async_trait]
impl pb::bench_server::Bench for Bench {
    async fn unary(&self, request: Request<pb::Request>) -> Result<Response<pb::Reply>, Status> {
        let deadline = Deadline::from_metadata(request.metadata());
        let req = request.into_inner();
        let reply = pb::Reply { text: req.text, sum: i64::from(req.a) + i64::from(req.b), seq: 0 };
        deadline.check()?;
        Ok(Response::new(reply))
    }

    type StreamStream = ReplyStream;

    async fn stream(&self, request: Request<pb::StreamRequest>) -> Result<Response<ReplyStream>, Status> {
        let deadline = Deadline::from_metadata(request.metadata());
        let req = request.into_inner();
        if !(0..=MAX_STREAM).contains(&req.count) {
            return Err(Status::invalid_argument(format!("count {} is outside 0..{MAX_STREAM}", req.count)));
        }
        deadline.check()?;
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        tokio::spawn(async move {
            for seq in 1..=i64::from(req.count) {
                let reply = deadline.check().map(|()| pb::Reply { text: req.text.clone(), sum: 0, seq });
                let failed = reply.is_err();
                // The client went away: nothing left to send to.
                if tx.send(reply).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
