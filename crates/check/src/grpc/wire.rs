//! What the gRPC check needs from the shared vocabulary (stampede-grpc) and
//! the two things it does not have: a contract's `.proto` given as text (the
//! built-in contract carries its file inside the binary) and the reading of
//! a `grpc-timeout` as a contract writes it (`1n`, `300m`), since the check
//! sends the value as written, malformed deadlines included, and judges the
//! call against the duration it means.

use std::time::Duration;

use stampede_grpc::{Code, Schema};

use crate::contract::Contract;

/// The status named `name` in a contract (`"UNIMPLEMENTED"`), if it is one.
pub fn code_of(name: &str) -> Option<Code> {
    Code::from_name(name)
}

/// The duration a `grpc-timeout` value means: 1 to 8 digits and a unit.
pub fn parse_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let nanos_per = match unit {
        "H" => 3_600_000_000_000,
        "M" => 60_000_000_000,
        "S" => 1_000_000_000,
        "m" => 1_000_000,
        "u" => 1_000,
        "n" => 1,
        _ => return None,
    };
    Some(Duration::from_nanos(n * nanos_per))
}

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
    fn a_grpc_timeout_is_digits_and_a_unit() {
        assert_eq!(parse_timeout("1n"), Some(Duration::from_nanos(1)));
        assert_eq!(parse_timeout("300m"), Some(Duration::from_millis(300)));
        assert_eq!(parse_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_timeout("1H"), Some(Duration::from_secs(3600)));
        for bad in ["", "m", "300", "300ms", "123456789m", "-1m", "1x"] {
            assert_eq!(parse_timeout(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_builtin_contract_reads_its_embedded_proto() {
        let contract = crate::builtin("grpc").unwrap();
        let schema = schema_of(&contract).unwrap();
        let unary = schema.method("stampede.bench.v1.Bench/Unary").unwrap();
        assert!(!unary.is_server_streaming());
        assert!(schema.method("stampede.bench.v1.Bench/Stream").unwrap().is_server_streaming());
    }
}
