//! The `stampede` binary: argument parsing and glue only. Each subcommand lives
//! in its own module under `cmd/`; the work is done by the library crates.

mod cmd;

use clap::Parser;

fn main() {
    let cli = cmd::Cli::parse();
    std::process::exit(cmd::dispatch(cli));
}
