//! What a contract is, declared once: the API a server claims to implement,
//! as data (a TOML file, docs/contracts.md), with the built-in contracts
//! (`contracts/*.toml`, embedded in the binary), the server's own URLs for a
//! contract's endpoints (URL maps, TechEmpower's benchmark_config.json) and
//! how long checking a contract may take. `stampede check` (stampede-check:
//! the clients, the judges, the report) and `stampede run` (which polls a
//! contract's ready path and gives `stampede check` its time budget) both
//! read it here, so run links no HTTP client of check's.
//!
//! ```
//! let contract = stampede_contract::resolve("sequence")?;
//! assert_eq!(contract.ready.as_deref(), Some("/api/count/1"));
//! # Ok::<(), stampede_contract::ContractError>(())
//! ```

mod answer;
mod budget;
mod builtin;
mod error;
mod escape;
pub mod generate;
mod grpc;
mod lenience;
mod model;
mod parse;
mod probe;
mod send;
pub mod tfb_config;
mod urls;

pub use answer::Answer;
pub use budget::STATS_FLUSH;
pub use builtin::{all as builtin_contracts, builtin, names as builtin_names, resolve, DEFAULT as DEFAULT_CONTRACT};
pub use error::ContractError;
pub use escape::escape;
pub use grpc::{Call, CallCheck, Protocol};
pub use lenience::Leniency;
pub use model::{Contract, Generate, ResponseCheck, Rule, Status};
pub use probe::{
    sleep_of, validate_concurrent, Probe, ProbeCheck, DEFAULT_CONNECTIONS, DEFAULT_REQUESTS, PHASE_TIMEOUT,
};
pub use send::{expand, Send, Split, SPLIT_PAUSE};
pub use urls::{endpoint_of, UrlMap};
