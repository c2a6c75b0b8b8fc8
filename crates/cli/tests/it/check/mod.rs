//! `stampede check`: the built-in contracts against in-test servers that
//! implement them exactly or break one rule, over HTTP/1.1 and HTTP/3, with a
//! database, at a server's own URLs and a TechEmpower config.

mod arena;
pub(crate) mod contract;
mod db;
mod http3;
mod tfb_config;
