//! One module per subcommand.

pub mod demo;
pub mod doctor;
pub mod gate;
pub mod lint;
pub mod list;
pub mod log;
pub mod replay;
pub mod sandbox;
pub mod serve;
pub mod settings;
pub mod test;
