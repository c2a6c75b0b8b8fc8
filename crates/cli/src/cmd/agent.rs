//! `stampede agent` (hidden): the server's host's half of `stampede run` with
//! `[hosts] server`, started by the controller over ssh. It reads one JSON
//! request on stdin, starts, probes and stops the app as asked, and answers
//! in JSON lines on stdout (stampede_run::server::agent). It never listens on a
//! port; a closed stdin stops the app and ends it.

pub fn run() -> anyhow::Result<i32> {
    let input = std::io::BufReader::new(std::io::stdin());
    Ok(stampede_run::server::agent::run(input, &mut std::io::stdout().lock()))
}
