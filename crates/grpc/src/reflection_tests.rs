use super::*;
use std::collections::HashMap;

const API: &str = r#"syntax = "proto3";
package shop.v1;
import "shop/v1/money.proto";
import "google/protobuf/timestamp.proto";
service Orders { rpc Place(Order) returns (Money); }
message Order { string id = 1; Money total = 2; google.protobuf.Timestamp at = 3; }
"#;
const MONEY: &str = "syntax = \"proto3\";\npackage shop.v1;\nmessage Money { int64 cents = 1; }\n";

/// Serialized FileDescriptorProtos of the test API by file name, as a
/// server holds them (compiled by protox from the text above).
fn server_files() -> HashMap<String, Vec<u8>> {
    struct Texts;
    impl protox::file::FileResolver for Texts {
        fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
            match name {
                "shop/v1/api.proto" => protox::file::File::from_source(name, API),
                "shop/v1/money.proto" => protox::file::File::from_source(name, MONEY),
                _ => protox::file::GoogleFileResolver::new().open_file(name),
            }
        }
    }
    let mut compiler = protox::Compiler::with_file_resolver(Texts);
    compiler.include_imports(true);
    compiler.open_file("shop/v1/api.proto").unwrap();
    compiler.file_descriptor_set().file.into_iter().map(|f| (f.name().to_string(), f.encode_to_vec())).collect()
}

/// A server that answers the symbol with its file only (as some do), each
/// file by name, and an error for what it lacks.
fn converse(symbol: &str, files: &HashMap<String, Vec<u8>>) -> (Result<Reflected, ReflectionError>, Vec<Ask>) {
    let mut resolver = Resolver::new(symbol);
    let mut asked = Vec::new();
    while let Some(request) = resolver.question() {
        let ask = request.ask.unwrap();
        asked.push(ask.clone());
        let found = match &ask {
            Ask::FileContainingSymbol(s) if s == "shop.v1.Orders" => files.get("shop/v1/api.proto"),
            Ask::FileContainingSymbol(_) => None,
            Ask::FileByFilename(name) => files.get(name),
        };
        let answer = match found {
            Some(bytes) => Answer::Files(FileDescriptorResponse { file_descriptor_proto: vec![bytes.clone()] }),
            None => Answer::Error(ErrorResponse { error_code: 5, error_message: "not found".into() }),
        };
        let roundtrip = Response::decode(Response { answer: Some(answer) }.encode_to_vec().as_slice()).unwrap();
        if let Err(e) = resolver.answer(roundtrip) {
            return (Err(e), asked);
        }
    }
    (resolver.finish(), asked)
}

#[test]
fn reflection_asks_for_the_service_then_each_import_and_encodes_as_the_proto_does() {
    let files = server_files();
    let (reflected, asked) = converse("shop.v1.Orders", &files);
    let reflected = reflected.unwrap();
    assert_eq!(asked[0], Ask::FileContainingSymbol("shop.v1.Orders".into()));
    assert_eq!(asked.len(), 3, "the symbol, then money.proto and timestamp.proto: {asked:?}");
    let method = reflected.schema.method("shop.v1.Orders/Place").unwrap();
    let json = r#"{"id":"a1","total":{"cents":250},"at":"2026-11-27T10:00:00Z"}"#;
    let body = method.encode_request(json).unwrap();
    let compiled = DescriptorPool::decode(reflected.descriptor_set.as_slice()).unwrap();
    let again = Schema::from_pool(compiled).method("shop.v1.Orders/Place").unwrap();
    assert_eq!(again.encode_request(json).unwrap(), body, "the carried descriptor set is the same schema");
    assert!(body.len() > 20, "every field encoded: {body:?}");
}

#[test]
fn a_well_known_import_the_server_lacks_comes_from_protox_and_any_other_is_named() {
    let mut files = server_files();
    files.remove("google/protobuf/timestamp.proto");
    assert!(converse("shop.v1.Orders", &files).0.is_ok());
    files.remove("shop/v1/money.proto");
    let err = converse("shop.v1.Orders", &files).0.err().unwrap();
    assert_eq!(
        err,
        ReflectionError::MissingFile { file: "shop/v1/money.proto".into(), needed_by: "shop/v1/api.proto".into() }
    );
    assert_eq!(err.to_string(), "did not send shop/v1/money.proto by server reflection (shop/v1/api.proto imports it); give --proto or --protoset");
}

#[test]
fn an_unknown_service_is_named_with_what_the_server_said() {
    let (result, asked) = converse("shop.v1.Nope", &server_files());
    assert_eq!(asked.len(), 1);
    let err = result.err().unwrap();
    assert_eq!(err.to_string(), "does not know the service shop.v1.Nope (NOT_FOUND: not found): check --call");
}

#[test]
fn the_request_is_on_the_wire_as_the_reflection_proto_says() {
    // ServerReflectionRequest { file_containing_symbol (4) = "a.B" }: tag 4, wire type 2.
    let request = Request { host: String::new(), ask: Some(Ask::FileContainingSymbol("a.B".into())) };
    assert_eq!(request.encode_to_vec(), b"\x22\x03a.B");
    let by_name = Request { host: String::new(), ask: Some(Ask::FileByFilename("x".into())) };
    assert_eq!(by_name.encode_to_vec(), b"\x1a\x01x");
}
