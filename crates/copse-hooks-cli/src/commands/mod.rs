//! One module per subcommand.

pub mod audit;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod gate;
pub mod guard;
pub mod init;
pub mod install;
pub mod lint;
pub mod list;
pub mod log;
pub mod replay;
pub mod sandbox;
pub mod serve;
pub mod settings;
pub mod shim;
pub mod test;
pub mod ui;
pub mod watch;
