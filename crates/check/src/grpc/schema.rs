//! The schema a gRPC check reads its contract's messages with, which the
//! shared vocabulary (stampede-grpc) cannot make alone: a built-in contract
//! carries its `.proto` as text inside the binary, not as a file. (How a
//! contract's `grpc-timeout` reads, `1n`, `300m`, is the contract's:
//! stampede_grpc::decode_timeout.)

use stampede_grpc::Schema;

use stampede_contract::Contract;

/// The schema of a gRPC contract: its `.proto` file when it was loaded from
/// one (imports resolved beside it), else the text it carries.
pub fn schema_of(contract: &Contract) -> Result<Schema, String> {
    let name = contract.proto.clone().unwrap_or_default();
    if let Some(path) = &contract.proto_path {
        return Schema::from_protos(std::slice::from_ref(path), &[]).map_err(|e| e.to_string());
    }
    let text = contract.proto_text.clone().ok_or_else(|| format!("{name}: the contract carries no .proto"))?;
    let resolver = Embedded { name: name.clone(), text };
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.open_file(&name).map_err(|e| format!("{name}: {e}"))?;
    Ok(Schema::from_pool(compiler.descriptor_pool()))
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
        let schema = schema_of(&contract).unwrap();
        let unary = schema.method("stampede.bench.v1.Bench/Unary").unwrap();
        assert!(!unary.is_server_streaming());
        assert!(schema.method("stampede.bench.v1.Bench/Stream").unwrap().is_server_streaming());
    }
}
