//! The Bench service over a real loopback connection (port 0) with tonic's
//! generated client: the answer is computed from the request, a stream sends
//! exactly the count asked, a count out of range is INVALID_ARGUMENT, an
//! unknown method UNIMPLEMENTED, and a deadline that has passed before the
//! handler answers DEADLINE_EXCEEDED (sent as `grpc-timeout: 1n`); server
//! reflection lists the Bench service.

use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::Channel;
use tonic::{Code, Request};

use crate::pb::bench_client::BenchClient;
use crate::pb::{Reply, StreamRequest};
use crate::service::MAX_STREAM;

/// A server on a port of its own for the test's lifetime, and a client to it.
async fn channel() -> Channel {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(crate::serve(listener, std::future::pending()));
    Channel::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap()
}

async fn client() -> BenchClient<Channel> {
    BenchClient::new(channel().await)
}

#[tokio::test]
async fn unary_answer_is_computed_from_the_request() {
    let mut client = client().await;
    for (text, a, b) in [("hello", 2, 3), ("", i32::MAX, i32::MAX), ("négatif", i32::MIN, -1)] {
        let req = crate::pb::Request { text: text.into(), a, b };
        let reply = client.unary(req).await.unwrap().into_inner();
        assert_eq!(reply, Reply { text: text.into(), sum: i64::from(a) + i64::from(b), seq: 0 });
    }
}

#[tokio::test]
async fn stream_sends_the_count_asked() {
    let mut client = client().await;
    for count in [0, 1, 1000] {
        let mut stream = client.stream(StreamRequest { text: "s".into(), count }).await.unwrap().into_inner();
        let mut got = 0;
        while let Some(reply) = stream.message().await.unwrap() {
            got += 1;
            assert_eq!(reply, Reply { text: "s".into(), sum: 0, seq: got });
        }
        assert_eq!(got, i64::from(count));
    }
}

#[tokio::test]
async fn stream_count_out_of_range_is_invalid_argument() {
    let mut client = client().await;
    for count in [-1, MAX_STREAM + 1] {
        let status = client.stream(StreamRequest { text: String::new(), count }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "count {count}");
    }
}

#[tokio::test]
async fn unknown_method_is_unimplemented() {
    let mut grpc = tonic::client::Grpc::new(channel().await);
    grpc.ready().await.unwrap();
    let path = "/stampede.bench.v1.Bench/Nope".parse().unwrap();
    let codec = tonic_prost::ProstCodec::<crate::pb::Request, Reply>::default();
    let status = grpc.unary(Request::new(crate::pb::Request::default()), path, codec).await.unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);
}

#[tokio::test]
async fn expired_deadline_is_deadline_exceeded() {
    let mut client = client().await;
    let mut unary = Request::new(crate::pb::Request::default());
    unary.set_timeout(Duration::from_nanos(1));
    assert_eq!(client.unary(unary).await.unwrap_err().code(), Code::DeadlineExceeded);
    let mut stream = Request::new(StreamRequest { text: String::new(), count: 5 });
    stream.set_timeout(Duration::from_nanos(1));
    assert_eq!(client.stream(stream).await.unwrap_err().code(), Code::DeadlineExceeded);
}

#[tokio::test]
async fn reflection_lists_the_bench_service() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let mut client = ServerReflectionClient::new(channel().await);
    let list = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies = client.server_reflection_info(tokio_stream::iter([list])).await.unwrap().into_inner();
    let reply = replies.message().await.unwrap().expect("a reply to list_services");
    let Some(MessageResponse::ListServicesResponse(listed)) = reply.message_response else {
        panic!("not a list of services: {:?}", reply.message_response);
    };
    let names: Vec<_> = listed.service.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"stampede.bench.v1.Bench"), "reflection lists {names:?}");
}
