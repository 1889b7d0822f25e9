//! The built-in guard (placeholder root while the pieces land).
mod code;
mod paths;
mod shell;
