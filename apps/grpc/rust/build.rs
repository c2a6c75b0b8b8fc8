//! Generates the Bench service's messages, server and client from the one
//! declaration of the API, contracts/grpc/bench.proto. protox parses the
//! .proto in Rust, so the build needs no protoc on the machine. The same
//! descriptors, encoded, are what server reflection describes
//! (`OUT_DIR/bench_descriptor.bin`, read by main.rs).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = "../../../contracts/grpc";
    let proto = format!("{dir}/bench.proto");
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto.as_str()], [dir])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("bench_descriptor.bin"), prost::Message::encode_to_vec(&descriptors))?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
