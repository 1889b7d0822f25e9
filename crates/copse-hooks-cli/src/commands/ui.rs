//! `copse-hooks ui [--port N] [--no-open]`: the local web page (crate `copse-hooks-ui`).
//!
//! This command builds the engine, starts the server and hands out its addresses.
//! Every address it prints or passes to a browser opener carries only a one-time
//! sign-in code: an opener's argv (and the browser's it starts) is readable by any
//! local process through `/proc`, so what is there must be worthless once the page
//! has loaded. The printed address and the browser's are two different codes, so
//! either can be used; Enter on stdin prints a fresh one.
//!
//! `--demo` serves the page over an example instead of the user's own world: the
//! demo's example session is replayed into a temporary store (with the example
//! workspace, an empty home and a `COPSE_DIR` of its own, all removed when the server
//! stops), so a new user sees every page populated, and nothing of the example
//! reaches their real store or settings.

use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use copse_hooks_ui::{Logins, Server, UiOptions};

use crate::args::Global;
use crate::commands::demo::{self, DemoWorld};
use crate::workspace;
use copse_hooks::{Engine, EngineConfig, Settings};

pub fn run(global: &Global, port: u16, no_open: bool, demo: bool) -> Result<ExitCode> {
    // Kept alive while the server runs: dropping it removes the demo's directory.
    let mut _demo_world = None;
    let engine: copse_hooks_ui::EngineFactory = if demo {
        let world = demo_store()?;
        let factory = demo_engine(&world);
        _demo_world = Some(world);
        factory
    } else {
        // Fail now, not on the first request, when the workspace is wrong.
        let first = workspace::engine(global)?;
        workspace::warn_settings(&first);
        let global = global.clone();
        Arc::new(move || {
            workspace::engine(&global)
                .map(|inv| inv.engine)
                .map_err(|e| format!("{e:#}"))
        })
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("failed to start the web server's runtime")?;
    let result = runtime.block_on(async move {
        let options = UiOptions::new(port, engine);
        let ttl = options.code_ttl.as_secs();
        let server = Server::bind(options).await?;
        let logins = server.logins();
        say(format_args!("copse-hooks ui: {}", logins.login_url()?));
        say(format_args!(
            "Serving on 127.0.0.1 only; press Ctrl-C to stop."
        ));
        say(format_args!(
            "The address signs in once, within {ttl} seconds; press Enter here for a new one."
        ));
        if !no_open {
            // A code of its own: the opener's argv is readable by every local process.
            open_browser(&logins.login_url()?);
        }
        new_links_on_enter(logins);
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

/// The demo's world with the example session recorded in its store, and its
/// settings as `copse-hooks trust` would leave them (hooks on, the example workspace
/// trusted and pinned), so the page's Trust view reads as a real one does.
fn demo_store() -> Result<DemoWorld> {
    let world = demo::prepare(None)?;
    let mut settings = Settings::default();
    settings.cursor_hooks_enabled = true;
    settings
        .trust(&world.root)
        .context("failed to pin the demo workspace")?;
    settings
        .save(&Settings::path_in(&world.copse_dir))
        .context("failed to write the demo settings")?;
    say(format_args!(
        "copse-hooks ui --demo: recording the example session into a temporary store ({}); \
         your own store is not touched.\n",
        world.copse_dir.display()
    ));
    demo::replay_session(
        &world,
        "the example session (examples/workspace/session.jsonl)",
        false,
    )?;
    say(format_args!(""));
    Ok(world)
}

/// The page's engine over the demo world: its workspace, home and `COPSE_DIR`, with
/// trust as its settings say (so trusting and untrusting from the page work on it).
fn demo_engine(world: &DemoWorld) -> copse_hooks_ui::EngineFactory {
    let (root, home, copse_dir) = (
        world.root.clone(),
        world.home.clone(),
        world.copse_dir.clone(),
    );
    Arc::new(move || {
        let settings = Settings::load(&Settings::path_in(&copse_dir)).map_err(|e| e.to_string())?;
        let mut config = EngineConfig::from_process(vec![root.clone()]).home(&home);
        config.copse_dir = copse_dir.clone();
        config.hooks_enabled = settings.cursor_hooks_enabled;
        config.trusted = settings.trusted_workspaces;
        Ok(Engine::new(config))
    })
}

/// One line on stdout; a closed stdout (the reader went away) does not stop the server.
fn say(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Prints a fresh sign-in address for every line read on stdin, until it ends.
fn new_links_on_enter(logins: Logins) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if line.is_err() {
                break;
            }
            match logins.login_url() {
                Ok(url) => say(format_args!("copse-hooks ui: {url}")),
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "copse-hooks ui: {e}");
                }
            }
        }
    });
}

/// The commands that may open `url`, in order: `$BROWSER` (a `:`-separated list of
/// commands, `%s` standing for the address, else it is the last argument) when set;
/// otherwise `open` on macOS and `xdg-open` in a graphical session on Linux.
fn openers(url: &str) -> Vec<Vec<String>> {
    if let Some(browser) = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        return browser
            .split(':')
            .filter(|c| !c.trim().is_empty())
            .map(|c| {
                let mut words: Vec<String> =
                    c.split_whitespace().map(|w| w.replace("%s", url)).collect();
                if !c.contains("%s") {
                    words.push(url.to_string());
                }
                words
            })
            .collect();
    }
    let graphical = cfg!(target_os = "macos")
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if !graphical {
        return Vec::new();
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    vec![vec![opener.to_string(), url.to_string()]]
}

/// Opens the browser when there is one; otherwise the printed address is the way in.
fn open_browser(url: &str) {
    let commands = openers(url);
    if commands.is_empty() {
        say(format_args!(
            "No browser found (no graphical session, no $BROWSER): open the address above."
        ));
        return;
    }
    for words in &commands {
        let Some((program, args)) = words.split_first() else {
            continue;
        };
        let spawned = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            // Reap it, so a quick opener does not linger as a zombie.
            std::thread::spawn(move || child.wait());
            return;
        }
    }
    let names: Vec<&str> = commands
        .iter()
        .filter_map(|w| w.first().map(String::as_str))
        .collect();
    say(format_args!(
        "Could not start {}: open the address above.",
        names.join(" or ")
    ));
}
