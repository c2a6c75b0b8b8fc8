//! The schema's unit tests: the repository's own contract file, protos
//! written to a scratch folder, and a protoset compiled from them.

use super::*;

fn contract() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contracts/grpc/bench.proto")
}

fn bench() -> Schema {
    Schema::from_protos(&[contract()], &[]).unwrap()
}

/// A fresh scratch folder for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stampede-grpc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_method_is_found_by_service_slash_method_and_knows_its_path_and_shape() {
    let schema = bench();
    assert_eq!(schema.methods(), ["stampede.bench.v1.Bench/Stream", "stampede.bench.v1.Bench/Unary"]);
    let unary = schema.method("stampede.bench.v1.Bench/Unary").unwrap();
    assert_eq!(unary.path(), "/stampede.bench.v1.Bench/Unary");
    assert!(!unary.is_server_streaming());
    assert_eq!(unary.input().full_name(), "stampede.bench.v1.Request");
    assert!(schema.method("stampede.bench.v1.Bench/Stream").unwrap().is_server_streaming());
    assert_eq!(schema.method("stampede.bench.v1.Bench.Unary").unwrap(), unary, "ghz's dotted form");
    assert_eq!(schema.method("/stampede.bench.v1.Bench/Unary").unwrap(), unary);
}

#[test]
fn an_unknown_method_names_the_call_and_lists_what_exists() {
    let err = bench().method("stampede.bench.v1.Bench/Nope").unwrap_err().to_string();
    assert_eq!(
        err,
        "stampede.bench.v1.Bench/Nope: no such method in the schema; it has \
         stampede.bench.v1.Bench/Stream, stampede.bench.v1.Bench/Unary"
    );
    assert!(bench().method("Other/Unary").unwrap_err().to_string().contains("no such method"));
    for malformed in ["Unary", "", "a.b/", "/x"] {
        let err = bench().method(malformed).unwrap_err();
        assert!(matches!(err, SchemaError::CallFormat { .. }), "{malformed}: {err}");
    }
}

#[test]
fn json_becomes_the_length_prefixed_request_and_an_answer_reads_back() {
    let unary = bench().method("stampede.bench.v1.Bench/Unary").unwrap();
    let wire = unary.encode_request(r#"{"text": "hi", "a": 2, "b": -3}"#).unwrap();
    // text = 1 (len 2), a = 2 (varint 2), b = 3 (varint -3: ten bytes).
    let body = [&[0x0a, 2][..], b"hi", &[0x10, 2, 0x18], &[0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]]
        .concat();
    assert_eq!(wire[0], 0, "uncompressed");
    assert_eq!(u32::from_be_bytes(wire[1..5].try_into().unwrap()) as usize, body.len());
    assert_eq!(&wire[5..], &body[..]);
    assert_eq!(unary.encode_request("{}").unwrap(), vec![0, 0, 0, 0, 0], "an empty message");
    // Reply{text: "hi", sum: 7, seq: 0}: seq at its default is not encoded.
    let reply = [&[0x0a, 2][..], b"hi", &[0x10, 7]].concat();
    assert_eq!(unary.response_json(&reply).unwrap(), serde_json::json!({"text": "hi", "sum": "7"}));
    assert!(matches!(unary.decode_response(&[0x0a, 9]), Err(SchemaError::Decode { .. })));
}

#[test]
fn data_not_matching_the_message_names_the_message_and_the_field() {
    let unary = bench().method("stampede.bench.v1.Bench/Unary").unwrap();
    let err = unary.encode_request(r#"{"txt": "hi"}"#).unwrap_err().to_string();
    assert!(err.starts_with("the request does not match stampede.bench.v1.Request: "), "{err}");
    assert!(err.contains("txt"), "{err}");
    let err = unary.encode_request(r#"{"a": "many"}"#).unwrap_err().to_string();
    assert!(err.contains("stampede.bench.v1.Request"), "{err}");
    assert!(unary.encode_request(r#"{"a": 1} trailing"#).is_err(), "text after the message");
    assert!(unary.encode_request("not json").is_err());
}

#[test]
fn a_missing_or_broken_proto_is_one_line_naming_the_file_and_the_place() {
    let missing = Schema::from_protos(&[PathBuf::from("/nonexistent/x.proto")], &[]).unwrap_err().to_string();
    assert!(missing.starts_with("/nonexistent/x.proto: "), "{missing}");
    assert!(missing.ends_with("give the path of an existing .proto file"), "{missing}");
    let dir = scratch("broken");
    let broken = dir.join("broken.proto");
    std::fs::write(&broken, "syntax = \"proto3\";\nmessage M {\n  int32 a = 1\n}\n").unwrap();
    let err = Schema::from_protos(std::slice::from_ref(&broken), &[]).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}: broken.proto:4:", broken.display())), "{err}");
    assert!(!err.contains('\n'), "{err}");
    let undefined = dir.join("undefined.proto");
    std::fs::write(&undefined, "syntax = \"proto3\";\nmessage M {\n  Nope n = 1;\n}\n").unwrap();
    let err = Schema::from_protos(&[undefined], &[]).unwrap_err().to_string();
    assert!(err.contains("undefined.proto:3:") && err.contains("Nope"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn imports_are_found_in_the_import_paths_and_well_known_types_built_in() {
    let dir = scratch("imports");
    std::fs::create_dir_all(dir.join("lib/shared")).unwrap();
    std::fs::write(
        dir.join("lib/shared/common.proto"),
        "syntax = \"proto3\";\npackage shared;\nmessage Id { string v = 1; }\n",
    )
    .unwrap();
    let api = dir.join("api.proto");
    std::fs::write(
        &api,
        "syntax = \"proto3\";\npackage api;\nimport \"shared/common.proto\";\nimport \"google/protobuf/empty.proto\";\n\
         service S { rpc Get(shared.Id) returns (google.protobuf.Empty); }\n",
    )
    .unwrap();
    let without = Schema::from_protos(std::slice::from_ref(&api), &[]).unwrap_err().to_string();
    assert!(without.contains("shared/common.proto"), "{without}");
    let schema = Schema::from_protos(std::slice::from_ref(&api), &[dir.join("lib")]).unwrap();
    let get = schema.method("api.S/Get").unwrap();
    assert_eq!(get.encode_request(r#"{"v": "x"}"#).unwrap(), vec![0, 0, 0, 0, 3, 0x0a, 1, b'x']);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_protoset_gives_the_same_methods_and_a_bad_one_says_how_to_make_one() {
    let dir = scratch("protoset");
    let mut compiler = protox::Compiler::new([contract().parent().unwrap()]).unwrap();
    compiler.include_imports(true).open_file(contract()).unwrap();
    let set = dir.join("bench.protoset");
    std::fs::write(&set, compiler.encode_file_descriptor_set()).unwrap();
    assert_eq!(Schema::from_protoset(&set).unwrap().methods(), bench().methods());
    std::fs::write(&set, b"\xff\xff not a descriptor set").unwrap();
    let err = Schema::from_protoset(&set).unwrap_err().to_string();
    assert!(err.starts_with(&set.display().to_string()) && err.contains("protoc --include_imports -o"), "{err}");
    let err = Schema::from_protoset(&dir.join("absent")).unwrap_err().to_string();
    assert!(err.contains("absent"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_client_stream_sends_each_message_of_the_array_framed_in_order_and_one_message_methods_refuse_an_array() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let streams = dir.join("crates/testkit/fixtures/grpc/streams.proto");
    let schema = Schema::from_protos(&[streams], &[dir.join("contracts/grpc")]).unwrap();
    let collect = schema.method("stampede.test.v1.Streams/Collect").unwrap();
    assert!(collect.is_client_streaming() && !collect.is_server_streaming());
    let echo = schema.method("stampede.test.v1.Streams/Echo").unwrap();
    assert!(echo.is_client_streaming() && echo.is_server_streaming());
    // a = 1 is [0x10, 1]; a = 2 is [0x10, 2]; {} is empty.
    let (wire, n) = collect.encode_requests(r#"[{"a": 1}, {}, {"a": 2}]"#).unwrap();
    assert_eq!(n, 3);
    assert_eq!(wire, [&[0, 0, 0, 0, 2, 0x10, 1][..], &[0, 0, 0, 0, 0], &[0, 0, 0, 0, 2, 0x10, 2]].concat());
    assert_eq!(collect.encode_requests(r#"{"a": 1}"#).unwrap(), (vec![0, 0, 0, 0, 2, 0x10, 1], 1), "one object");
    assert_eq!(collect.encode_requests("[]").unwrap(), (Vec::new(), 0), "a stream of none");
    let err = collect.encode_requests(r#"[{"a": 1}, {"txt": 1}]"#).unwrap_err().to_string();
    assert!(err.contains("message 1 of the array") && err.contains("txt"), "{err}");
    let unary = bench().method("stampede.bench.v1.Bench/Unary").unwrap();
    assert_eq!(unary.encode_requests(r#"{"a": 1}"#).unwrap(), (unary.encode_request(r#"{"a": 1}"#).unwrap(), 1));
    let err = unary.encode_requests(r#" [{"a": 1}]"#).unwrap_err().to_string();
    assert!(err.contains("takes one request message; an array is for client-streaming calls"), "{err}");
}
