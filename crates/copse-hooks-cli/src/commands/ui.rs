//! `copse-hooks ui [--port N] [--no-open]`: the local web page (crate `copse-hooks-ui`).

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use copse_hooks_ui::{Server, UiOptions};

use crate::cli::Global;
use crate::workspace;

pub fn run(global: &Global, port: u16, no_open: bool) -> Result<ExitCode> {
    // Fail now, not on the first request, when the workspace is wrong.
    let first = workspace::engine(global)?;
    workspace::warn_settings(&first);
    let global = global.clone();
    let engine: copse_hooks_ui::EngineFactory = Arc::new(move || {
        workspace::engine(&global)
            .map(|inv| inv.engine)
            .map_err(|e| format!("{e:#}"))
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("failed to start the web server's runtime")?;
    let result = runtime.block_on(async move {
        let server = Server::bind(UiOptions { port, engine }).await?;
        let url = server.url();
        println!("copse-hooks ui: {url}");
        println!("Serving on 127.0.0.1 only; press Ctrl-C to stop.");
        if !no_open {
            open_browser(&url);
        }
        // Ctrl-C stops at once: an open page keeps a live-update stream open, which a
        // graceful shutdown would wait for.
        tokio::select! {
            served = server.run() => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
        anyhow::Ok(ExitCode::SUCCESS)
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

/// Opens the default browser when there is one (a graphical session on Linux, always
/// on macOS); otherwise the printed address is the way in.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        Some("open")
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some("xdg-open")
    } else {
        None
    };
    let Some(opener) = opener else {
        println!("No browser found (no graphical session): open the address above.");
        return;
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        println!("Could not start {opener}: open the address above.");
    }
}
