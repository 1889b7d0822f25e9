//! The `copse-hooks` command. All behaviour lives in the `copse-hooks` engine crate;
//! this binary parses arguments, builds an engine and formats results.

mod cli;
mod commands;
mod output;
#[cfg(unix)]
mod signals;
mod time;
mod workspace;

fn main() -> std::process::ExitCode {
    #[cfg(unix)]
    signals::install();
    let code = cli::main();
    #[cfg(unix)]
    signals::hold_if_terminating();
    code
}
