//! One module per subcommand.

pub mod demo;
pub mod gate;
pub mod lint;
pub mod list;
pub mod replay;
pub mod settings;
pub mod test;
