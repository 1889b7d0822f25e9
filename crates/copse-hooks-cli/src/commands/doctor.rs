//! `copse-hooks doctor`: why hooks do or don't run, on one screen — including the
//! hooks an installed shim would cut off at its `--deadline`.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks_wire::output::{AgentShimOutput, DoctorOutput, ShimServedOutput};

use crate::args::Global;
use crate::host::{self, Origin};
use crate::output::{self, clean, paint};

pub fn run(global: &Global) -> Result<ExitCode> {
    let roots = if global.workspaces.is_empty() {
        vec![std::env::current_dir().context("failed to read the current directory")?]
    } else {
        global.workspaces.clone()
    };
    let hosted = host::hosted(
        roots,
        global.trust.then_some(true),
        global.enable.then_some(true),
        Origin::Flag,
    )?;
    let mut report = copse_hooks_server::doctor::report(&hosted);
    report.agents = agents(&hosted.engine.config().copse_dir);
    let daemon = super::serve::daemon_report();
    if daemon.status == "running" {
        report.daemon = Some(daemon);
    }
    daemon_otel(&mut report, &hosted);
    deadline_warnings(&mut report, &hosted.engine);
    // Shim calls that failed closed or were not served (`shim-errors.log`).
    let copse_dir = &hosted.engine.config().copse_dir;
    let shim_errors = copse_hooks::agent::shim::error_warnings(copse_dir, 3);
    report.settings.warnings.extend(shim_errors);
    if global.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_human(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// What is wrong with the executable `agent`'s shim entries in `config` run, if
/// anything: no entry left, a binary that is missing, or one that is not this
/// `copse-hooks` (an install from another path; an upgrade that left the old path).
/// Paths are compared, not versions: running the other binary would cost a process per
/// entry, and a different path is already worth saying.
fn binary_problem(agent: &str, config: &std::path::Path) -> Option<String> {
    let parsed = copse_hooks::agent::Agent::parse(agent)?;
    let commands = super::install::shim_commands_in(parsed, config);
    if commands.is_empty() {
        return Some(format!(
            "no shim entry is left in {} (removed by hand?): {agent} does not call copse-hooks; run `copse-hooks install --agent {agent}`",
            config.display()
        ));
    }
    let this = std::env::current_exe().ok();
    let this_real = this.as_deref().and_then(|p| std::fs::canonicalize(p).ok());
    for command in commands {
        let binary = super::install::command_binary(&command);
        let path = std::path::Path::new(&binary);
        let Ok(real) = std::fs::canonicalize(path) else {
            return Some(format!(
                "the shim entries run {binary}, which is missing (no such file): every {agent} hook call fails; run `copse-hooks install --agent {agent}` to point them at this copse-hooks"
            ));
        };
        if this_real.as_ref().is_some_and(|t| *t != real) {
            return Some(format!(
                "the shim entries run {binary}, not this copse-hooks ({}; another path, perhaps another version): run `copse-hooks install --agent {agent}` with the one you mean {agent} to use",
                this.as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ));
        }
    }
    None
}

/// Per agent: where the shim is installed (`install`'s manifest), what was adopted,
/// which path served its most recent calls, and whether the binary its entries run is
/// this one.
pub fn agents(copse_dir: &std::path::Path) -> Vec<AgentShimOutput> {
    super::install::status()
        .into_iter()
        .map(|i| {
            let binary_problem = binary_problem(&i.agent, &i.path);
            let served = copse_hooks::agent::Agent::parse(&i.agent)
                .and_then(|a| copse_hooks::agent::shim::read_served(copse_dir, a))
                .map(|s| ShimServedOutput {
                    path: s.path,
                    fallback: s.fallback,
                    since_ms: s.since_ms,
                });
            AgentShimOutput {
                agent: i.agent,
                scope: i.scope,
                path: i.path.display().to_string(),
                command: i.command,
                adopted: i.adopted.map(|a| a.display().to_string()),
                adopted_events: i.adopted_events,
                served,
                binary_problem,
            }
        })
        .collect()
}

/// Warns about every hook an installed shim runs whose timeout is longer than the
/// shim's `--deadline` (the shim answers the agent's block at its deadline, cutting
/// such a hook off), and about shims installed without a deadline. Each warning goes
/// to the config file that holds the hook (or, when doctor does not list that file,
/// to the settings' warnings).
fn deadline_warnings(report: &mut DoctorOutput, engine: &copse_hooks::Engine) {
    let config = engine.config();
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from);
    for installed in super::install::status() {
        let Some(agent) = copse_hooks::agent::Agent::parse(&installed.agent) else {
            continue;
        };
        let Some(deadline) = copse_hooks::agent::deadline_in(&installed.command) else {
            report.settings.warnings.push(format!(
                "the {agent} shim in {} has no --deadline (an older install): a slow hook outlasts {agent}'s timeout and the action goes through; run `copse-hooks install --agent {agent}` again",
                installed.path.display()
            ));
            continue;
        };
        let slow = copse_hooks::agent::hooks_past_deadline(
            agent,
            &config.home,
            codex_home.as_deref(),
            &config.copse_dir,
            engine.workspace_roots(),
            deadline,
        );
        for (source, event, command, timeout) in slow {
            let message = format!(
                "\"{event}\" hook `{command}` has a timeout of {} s, longer than the {agent} shim's --deadline of {} s: under the shim it is cut off and the call blocked at {} s",
                timeout.as_secs_f64(),
                deadline.as_secs_f64(),
                deadline.as_secs_f64()
            );
            let path = source.display().to_string();
            match report.configs.iter_mut().find(|c| c.path == path) {
                Some(c) => {
                    if !c.warnings.contains(&message) {
                        c.warnings.push(message);
                    }
                }
                None => report.settings.warnings.push(format!("{path}: {message}")),
            }
        }
    }
}

fn print_agents(agents: &[AgentShimOutput]) {
    heading("Agents");
    if agents.is_empty() {
        outln!("  no shim installed (`copse-hooks install --agent NAME`)");
    }
    for a in agents {
        outln!(
            "  {:<7} shim installed ({}) in {}",
            clean(&a.agent),
            clean(&a.scope),
            clean(&a.path)
        );
        if let Some(adopted) = &a.adopted {
            outln!(
                "          adopted {} into {}",
                clean(&a.adopted_events.join(", ")),
                clean(adopted)
            );
        }
        if let Some(problem) = &a.binary_problem {
            outln!(
                "          {}: {}",
                paint("problem", output::RED, false),
                clean(problem)
            );
        }
        match &a.served {
            None => outln!("          {}", paint("not called yet", output::DIM, false)),
            Some(s) => {
                let why = s
                    .fallback
                    .as_deref()
                    .map(|f| format!(" ({})", clean(f)))
                    .unwrap_or_default();
                let by = if s.path == "daemon" {
                    "by the daemon".to_string()
                } else {
                    clean(&s.path)
                };
                outln!(
                    "          served {by}{why} since {}",
                    crate::time::format_time(s.since_ms, true)
                );
            }
        }
    }
}

/// The managed policy section: where it was read, whether it can be used, what it
/// sets, and the vendors' managed tiers honoured.
fn print_managed(m: &copse_hooks_wire::output::ManagedReport) {
    heading("Managed policy");
    let state = match m.state.as_str() {
        "broken" => paint("BROKEN", output::RED, false),
        "valid" => paint("valid", output::GREEN, false),
        other => clean(other),
    };
    let redirected = if m.redirected {
        " (COPSE_MANAGED_DIR)"
    } else {
        ""
    };
    outln!("  {} {state}{redirected}", clean(&m.dir));
    for w in &m.warnings {
        outln!(
            "  {}: {}",
            paint("warning", output::YELLOW, false),
            clean(w)
        );
    }
    if m.state != "absent" {
        outln!(
            "  {:<21} {}",
            "allowManagedHooksOnly",
            if m.allow_managed_hooks_only {
                "true: only managed hooks run"
            } else {
                "false"
            }
        );
        if m.failure_floors.is_empty() {
            outln!("  {:<21} none", "failurePolicy floors");
        }
        for (key, floor) in &m.failure_floors {
            outln!(
                "  {:<21} {} {}",
                "failurePolicy floor",
                clean(key),
                clean(floor)
            );
        }
        outln!(
            "  {:<21} {}",
            "pinned OTLP endpoint",
            m.pinned_endpoint
                .as_deref()
                .map_or_else(|| "none".to_string(), clean)
        );
        outln!("  {:<21} {}", "requireSandbox", m.require_sandbox);
        outln!("  {:<21} {}", "managed hooks", m.hooks);
    }
    for v in &m.vendors {
        outln!(
            "  {} managed tier: {}",
            clean(&v.vendor),
            clean(&v.files.join(", "))
        );
        outln!("      {}", clean(&v.effect));
        for w in &v.warnings {
            outln!(
                "      {}: {}",
                paint("warning", output::YELLOW, false),
                clean(w)
            );
        }
    }
}

fn heading(text: &str) {
    outln!("{}", paint(text, output::BOLD, false));
}

fn print_human(r: &DoctorOutput) {
    heading("Hooks");
    if r.enablement.enabled {
        outln!("  enabled (from {})", clean(&r.enablement.source));
    } else {
        outln!(
            "  {} (from {}): turn them on with `copse-hooks enable`",
            paint("OFF", output::YELLOW, false),
            r.enablement.source
        );
        if let Some(m) = r.managed.as_ref().filter(|m| m.hooks > 0) {
            outln!("  managed hooks still run ({})", m.hooks);
        }
    }
    if r.recursion_guard {
        outln!(
            "  {}: this process runs inside a hook, so no hook runs here",
            paint("recursion guard", output::YELLOW, false)
        );
    }
    heading("Workspace roots");
    for root in &r.roots {
        outln!("  {:<9} {}", root.trust, clean(&root.path));
    }
    heading("Config files searched");
    for c in &r.configs {
        let detail = if c.exists {
            format!("{} · {} hook(s)", c.status, c.hooks)
        } else {
            c.status.clone()
        };
        outln!(
            "  {:<7} {:<7} {} {}",
            c.dialect,
            c.scope,
            clean(&c.path),
            paint(&format!("({})", clean(&detail)), output::DIM, false)
        );
        for w in &c.warnings {
            outln!(
                "          {}: {}",
                paint("warning", output::YELLOW, false),
                clean(w)
            );
        }
    }
    heading("Settings");
    outln!(
        "  {} {}",
        clean(&r.settings.path),
        if r.settings.exists {
            ""
        } else {
            "(does not exist: defaults)"
        }
    );
    for v in &r.settings.values {
        outln!(
            "  {:<21} {} {}",
            v.key,
            clean(&v.value.to_string()),
            paint(&format!("({})", v.source), output::DIM, false)
        );
    }
    for w in &r.settings.warnings {
        outln!(
            "  {}: {}",
            paint("warning", output::YELLOW, false),
            clean(w)
        );
    }
    if let Some(m) = &r.managed {
        print_managed(m);
    }
    heading("Sandbox");
    if !r.sandbox.on {
        outln!("  off");
    } else {
        outln!(
            "  {} {}{}",
            r.sandbox.mechanism.as_deref().unwrap_or("none"),
            if r.sandbox.enforced {
                "enforced: "
            } else {
                "NOT enforced: "
            },
            clean(r.sandbox.enforcement.as_deref().unwrap_or(""))
        );
        if r.sandbox.required {
            outln!("  required (requireSandbox): unenforced runs fail");
        }
        for p in &r.sandbox.writable_paths {
            outln!("  writable: {}", clean(p));
        }
        for l in &r.sandbox.layers {
            outln!(
                "  {} {}: {}",
                if l.enforced {
                    paint("enforced", output::GREEN, false)
                } else {
                    paint("NOT enforced", output::YELLOW, false)
                },
                clean(&l.name),
                clean(&l.detail)
            );
        }
    }
    heading("Audit store");
    outln!(
        "  {} ({}{})",
        clean(&r.audit.path),
        if r.audit.recording {
            "recording"
        } else {
            "not recording"
        },
        if r.audit.exists { "" } else { ", no runs yet" }
    );
    if let Some(w) = &r.audit.warning {
        outln!(
            "  {}: {}",
            paint("warning", output::YELLOW, false),
            clean(w)
        );
    }
    if !r.persistent.is_empty() {
        heading("Persistent hooks");
        for p in &r.persistent {
            let state = match p.state.as_str() {
                "broken" => paint("broken", output::RED, false),
                "running" => paint("running", output::GREEN, false),
                other => clean(other),
            };
            let idle = p.idle_timeout_ms.map_or_else(
                || "never stopped idle".to_string(),
                |ms| format!("idle stop after {}s", ms as f64 / 1000.0),
            );
            outln!(
                "  {} {}[{}] {} {}",
                state,
                clean(&p.event),
                p.entry,
                clean(&p.command),
                paint(
                    &format!(
                        "({}{idle})",
                        p.pid.map(|pid| format!("pid {pid} · ")).unwrap_or_default()
                    ),
                    output::DIM,
                    false
                )
            );
            if let Some(reason) = &p.reason {
                outln!("      {}", clean(reason));
            }
        }
    }
    if let Some(d) = &r.daemon {
        heading("Daemon");
        outln!(
            "  running (pid {}) on {}",
            d.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
            clean(&d.socket)
        );
        for line in super::serve::daemon_detail_lines(d) {
            outln!("  {line}");
        }
    }
    if let Some(o) = &r.otel {
        print_otel(o);
    }
    print_agents(&r.agents);
    heading("Most recent failure of each hook");
    if r.recent_failures.is_empty() {
        outln!("  none recorded");
    }
    for f in &r.recent_failures {
        outln!(
            "  {} {} {}",
            paint(&f.run_id, output::DIM, false),
            clean(&f.event),
            clean(&f.command)
        );
        outln!(
            "      {} {}",
            clean(&f.message),
            paint(
                &format!("({})", crate::time::format_time(f.at, true)),
                output::DIM,
                false
            )
        );
    }
}

/// The "OTLP export" section: this process's export, then the daemon's.
fn print_otel(o: &copse_hooks_wire::output::OtelReport) {
    heading("OTLP export");
    match &o.traces_url {
        Some(url) => outln!("  every blocking gate is exported to {}", clean(url)),
        None => outln!(
            "  off in this process: no usable endpoint (the OTEL_* variables, the \"otel\" settings)"
        ),
    }
    if o.traces_url.is_some() {
        outln!(
            "  {} exported, {} dropped, {} failed, {} pending (this process)",
            o.exported,
            o.dropped,
            o.failed,
            o.pending
        );
    }
    if let Some(e) = &o.last_error {
        outln!("  last error: {}", clean(e));
    }
    for w in &o.warnings {
        outln!(
            "  {} {}",
            paint("warning:", output::YELLOW, false),
            clean(w)
        );
    }
    if let Some(d) = &o.daemon {
        match &d.traces_url {
            Some(url) => outln!(
                "  the daemon: {} exported, {} dropped, {} failed, {} pending (to {})",
                d.exported,
                d.dropped,
                d.failed,
                d.pending,
                clean(url)
            ),
            None => outln!("  the daemon: off"),
        }
        if let Some(e) = &d.last_error {
            outln!("    last error: {}", clean(e));
        }
        for w in &d.warnings {
            outln!(
                "    {} {}",
                paint("warning:", output::YELLOW, false),
                clean(w)
            );
        }
    }
}

/// Asks the running daemon (if any) for its OTLP export — the agent calls it serves
/// are exported from there — and adds it to the report's `otel`. Bounded: a daemon
/// that does not answer within two seconds is left out.
fn daemon_otel(report: &mut DoctorOutput, hosted: &copse_hooks_server::Hosted) {
    if report.daemon.is_none() {
        return;
    }
    let Some(root) = hosted.engine.workspace_roots().first() else {
        return;
    };
    let socket = super::serve::daemon_socket();
    let Some(theirs) = ask_daemon_otel(&socket, root) else {
        return;
    };
    let ours = report.otel.get_or_insert_with(Default::default);
    ours.daemon = Some(Box::new(theirs));
}

/// `initialize` then `doctor` on the daemon's socket; its `otel`, if it has one.
fn ask_daemon_otel(
    socket: &std::path::Path,
    root: &std::path::Path,
) -> Option<copse_hooks_wire::output::OtelReport> {
    use std::io::{BufRead as _, Read as _, Write as _};
    let bound = std::time::Duration::from_secs(2);
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(bound)).ok()?;
    stream.set_write_timeout(Some(bound)).ok()?;
    let requests = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"workspaceRoots": [root.to_str()?]}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "doctor"}),
    ];
    let mut lines = String::new();
    for r in &requests {
        lines.push_str(&r.to_string());
        lines.push('\n');
    }
    stream.write_all(lines.as_bytes()).ok()?;
    let started = std::time::Instant::now();
    let mut reader = std::io::BufReader::new(stream.take(16 << 20));
    let mut line = String::new();
    while started.elapsed() < bound {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if msg.get("id") == Some(&serde_json::json!(2)) {
            let otel = msg.get("result")?.get("otel")?.clone();
            return serde_json::from_value(otel).ok();
        }
    }
    None
}
