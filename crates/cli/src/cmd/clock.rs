//! `stampede clock` (hidden): the remote half of the clock-offset measurement
//! of `stampede load --hosts`, run over ssh by the controller. It answers each
//! line on stdin with CLOCK_REALTIME in nanoseconds until stdin closes.

pub fn run() -> anyhow::Result<i32> {
    stampede_remote::clock::serve(std::io::stdin().lock(), std::io::stdout().lock())?;
    Ok(0)
}
