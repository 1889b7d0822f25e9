//! The `copse-hooks` command. All behaviour lives in the `copse-hooks` engine crate;
//! this binary parses arguments, builds an engine and formats results.

mod cli;
mod commands;
mod host;
mod output;
mod time;
mod workspace;

fn main() -> std::process::ExitCode {
    cli::main()
}
