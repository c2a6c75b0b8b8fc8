//! The schema a gRPC check reads its contract's messages with, which the
//! shared vocabulary (stampede-grpc) cannot make alone: a built-in contract
//! carries its `.proto` as text inside the binary, not as a file, and a
//! contract without `proto` is read with the server's own schema, by
//! reflection. (How a contract's `grpc-timeout` reads, `1n`, `300m`, is
//! the contract's: stampede_grpc::decode_timeout.)

use std::time::Duration;

use stampede_grpc::client::Endpoint;
use stampede_grpc::prost_reflect::DescriptorPool;
use stampede_grpc::Schema;

use stampede_contract::Contract;

/// The schema of a gRPC contract: its `.proto` file when it was loaded from
/// one (imports resolved beside it), else the text it carries, else (no
/// `proto`) the server's by reflection.
pub fn schema_of(contract: &Contract, server: Server, timeout: Duration) -> Result<Schema, String> {
    let name = contract.proto.clone().unwrap_or_default();
    if let Some(path) = &contract.proto_path {
        return Schema::from_protos(std::slice::from_ref(path), &[]).map_err(|e| e.to_string());
    }
    let Some(text) = contract.proto_text.clone() else { return reflected(contract, server, timeout) };
    let resolver = Embedded { name: name.clone(), text };
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.open_file(&name).map_err(|e| format!("{name}: {e}"))?;
    Ok(Schema::from_pool(compiler.descriptor_pool()))
}

/// The server's endpoint and its URL, for messages.
pub type Server<'a> = (&'a Endpoint, &'a str);

/// The services the contract's calls with a request message name, asked
/// of the server by reflection, in one schema. (A call given as
/// `body_hex`, such as one to an unknown method, needs no schema.)
fn reflected(contract: &Contract, server: Server, timeout: Duration) -> Result<Schema, String> {
    let mut services: Vec<&str> = contract
        .calls
        .iter()
        .filter(|c| c.request.is_some())
        .filter_map(|c| stampede_grpc::split_call(&c.path).map(|(service, _)| service))
        .collect();
    services.sort();
    services.dedup();
    let mut pool = DescriptorPool::new();
    for service in services {
        let got = stampede_grpc::reflect::reflect(server.0, service, &[], timeout)
            .map_err(|e| format!("{} {e}", server.1))?;
        pool.decode_file_descriptor_set(got.descriptor_set.as_slice()).map_err(|e| e.to_string())?;
    }
    Ok(Schema::from_pool(pool))
}

/// One `.proto` held in memory, as protox asks for files.
struct Embedded {
    name: String,
    text: String,
}

impl protox::file::FileResolver for Embedded {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name != self.name {
            return Err(protox::Error::file_not_found(name));
        }
        protox::file::File::from_source(name, &self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_contract_reads_its_embedded_proto() {
        let contract = stampede_contract::builtin("grpc").unwrap();
        let nowhere = Endpoint { addrs: Vec::new(), authority: String::new(), tls: None };
        let schema = schema_of(&contract, (&nowhere, "http://nowhere"), Duration::from_secs(1)).unwrap();
        let unary = schema.method("stampede.bench.v1.Bench/Unary").unwrap();
        assert!(!unary.is_server_streaming());
        assert!(schema.method("stampede.bench.v1.Bench/Stream").unwrap().is_server_streaming());
    }
}
