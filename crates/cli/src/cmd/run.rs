//! `stampede run`. (Being written: see issue 5.)
#[derive(clap::Args)]
pub struct Args {}
pub fn run(_args: Args) -> anyhow::Result<i32> {
    anyhow::bail!("run is not implemented yet")
}
