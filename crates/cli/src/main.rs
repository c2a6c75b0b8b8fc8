//! The `stampede` binary: argument parsing and glue only. Each subcommand lives
//! in its own module under `cmd/`; the work is done by the library crates.

mod cmd;

use clap::error::ErrorKind;
use clap::Parser;

fn main() {
    let cli = match cmd::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("stampede: error: {}", one_line(&e.to_string()));
            std::process::exit(2);
        }
    };
    std::process::exit(cmd::dispatch(cli));
}

/// clap's usage errors span several lines (the error, possible values or a
/// tip, the usage, a pointer to --help); bad input here is one line, like
/// every other error of Stampede's.
fn one_line(rendered: &str) -> String {
    let mut line = String::new();
    for part in rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
    {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    line + "; see --help"
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn clap_errors_become_one_line_naming_the_flag() {
        let rendered = "error: invalid value 'bogus' for '--engine <ENGINE>'\n  [possible values: auto, epoll, io-uring]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "invalid value 'bogus' for '--engine <ENGINE>'; [possible values: auto, epoll, io-uring]; see --help"
        );
    }

    #[test]
    fn a_list_after_a_colon_stays_on_its_line() {
        let rendered = "error: the following required arguments were not provided:\n  <URL>\n\nUsage: stampede load <URL>\n\nFor more information, try '--help'.\n";
        assert_eq!(one_line(rendered), "the following required arguments were not provided: <URL>; see --help");
    }
}
