//! Generates the Bench service's messages, server and client from the one
//! declaration of the API, contracts/grpc/bench.proto. protox parses the
//! .proto in Rust, so the build needs no protoc on the machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = "../../../contracts/grpc";
    let proto = format!("{dir}/bench.proto");
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto.as_str()], [dir])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
