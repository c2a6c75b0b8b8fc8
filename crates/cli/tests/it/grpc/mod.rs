//! gRPC: `stampede load --grpc` and `stampede check --contract grpc` against
//! the gRPC test servers.

mod check;
mod load;
mod reflection;
