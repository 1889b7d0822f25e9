//! The `copse-hooks` command. All behaviour lives in the `copse-hooks` engine crate;
//! this binary parses arguments, builds an engine and formats results.

#[macro_use]
mod output;
mod args;
mod cli;
mod commands;
mod host;
mod notices;
mod progress;
#[cfg(unix)]
mod signals;
mod time;
mod tools;
mod workspace;

fn main() -> std::process::ExitCode {
    let code = cli::main();
    #[cfg(unix)]
    signals::hold_if_terminating();
    code
}
