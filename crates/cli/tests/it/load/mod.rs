//! `stampede load` through the real binary, by protocol and feature: counts
//! against servers that behave and servers that misbehave on purpose, every
//! engine, TLS, HTTP/2, HTTP/3, pipelining, request mixes, the load spec,
//! stages, the HdrHistogram log and the documented limits of every flag.

mod basics;
mod bodies;
mod engines;
mod hdr_log;
mod hostile;
mod http2;
mod http3;
mod limits;
mod mix;
mod pipeline;
mod spec;
mod stages;
mod tls;
