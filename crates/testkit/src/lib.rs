//! Helpers shared by the `check` and `apps` integration tests: an in-test
//! server that implements the contract (with switchable faults), running the
//! real `stampede` binary with a deadline, and starting and stopping the
//! reference apps. Each test binary uses only part of this, hence the allow.
#![allow(dead_code)]

pub mod app;
pub mod arena;
pub mod net;
pub mod process;
pub mod server;
