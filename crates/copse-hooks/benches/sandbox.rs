//! Sandbox overhead benchmark: `cargo bench -p copse-hooks --bench sandbox`.
//!
//! Plain `std` timing, no harness. A trivial hook (`cat >/dev/null; echo '{}'`, fed a
//! small JSON payload) through `spawn::run`, from the spawn floor (uncontained,
//! unsandboxed) through each layer up to a project hook as it runs now (pid namespace,
//! private `/proc`, Landlock, seccomp, every read-only bind), all interleaved in one run
//! (the order rotates every round, so machine noise hits every variant) and compared by
//! median. The sandboxed timings cover everything the runner adds per run:
//! `Sandbox::prepare` (private temp dir, path fds, ruleset, binds), the setup in the
//! child, `detect` and the drop (temp dir removal). The test seams of the `test-seams`
//! feature switch containment and the private `/proc` off for the "before" variants.
//! A miss of the target is reported, never asserted; the binary never panics and exits 0
//! unless it cannot run at all.
//!
//! Linux only (Landlock).

use std::ffi::OsString;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use copse_hooks::sandbox::{LinuxSandbox, Sandbox, SandboxPolicy};
use copse_hooks::spawn::{self, Limits, SpawnRequest};

const HOOK: &str = "cat >/dev/null; echo '{}'";
const STDIN: &[u8] = br#"{"hook_event_name":"beforeShellExecution","command":"git status"}"#;
const EXPECTED: &[u8] = b"{}\n";
const WARMUP: usize = 30;
const ITERS: usize = 300;
const TARGET_RATIO: f64 = 1.10;

/// One variant: what it runs, and the seams it needs.
struct Variant<'a> {
    name: &'static str,
    /// `None`: unsandboxed.
    bench: Option<Bench<'a>>,
    contained: bool,
    private_proc: bool,
}

fn main() {
    println!("copse-hooks sandbox benchmark (pid {})", std::process::id());
    let sandbox = LinuxSandbox::new();
    let status = sandbox.status();
    println!("{status}\n");
    if !status.enforcement.is_enforced() {
        println!("Landlock is not enforced here: nothing to measure");
        return;
    }
    let workspace = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            println!("cannot create a workspace: {e}");
            return;
        }
    };
    let ws = workspace.path();
    // A workspace as a project hook sees it: a git repository with a Cursor config and a
    // submodule, and a home with every agent's configs and a $COPSE_DIR, so the protected
    // paths exist and are really bound read-only.
    for dir in [
        ".git/hooks",
        ".git/info",
        ".git/modules/sub/hooks",
        ".cursor",
        "home/.cursor/hooks",
        "home/.claude/agents",
        "home/.claude/commands",
        "home/.gemini",
        "home/.codex",
        "home/.copse/state",
    ] {
        let _ = std::fs::create_dir_all(ws.join(dir));
    }
    for file in [
        ".git/config",
        ".git/modules/sub/config",
        ".cursor/hooks.json",
        "AGENTS.md",
        "home/.cursor/hooks.json",
        "home/.cursor/mcp.json",
        "home/.claude.json",
        "home/.claude/settings.json",
        "home/.claude/CLAUDE.md",
        "home/.gemini/settings.json",
        "home/.gemini/GEMINI.md",
        "home/.codex/config.toml",
        "home/.codex/AGENTS.md",
        "home/.copse/settings.json",
        "home/.copse/spine.db",
    ] {
        let _ = std::fs::write(ws.join(file), "{}\n");
    }
    let home = ws.join("home");
    let all =
        copse_hooks::sandbox::protected_paths(&home, &home.join(".copse"), &[ws.to_path_buf()]);
    // The binds before issue 22: the workspace's configs and .git config/hooks/info.
    let before: Vec<_> = [".cursor", ".git/config", ".git/hooks", ".git/info"]
        .iter()
        .map(|p| ws.join(p))
        .collect();
    let landlock = SandboxPolicy::new([ws]);
    let seccomp = landlock.clone().unix_sockets(false);
    let old_binds = seccomp.clone().protected(before);
    let project = seccomp.clone().protected(all);
    let bench = |policy| Bench {
        sandbox: &sandbox,
        policy,
        cwd: ws,
    };
    let variant = |name, bench, contained, private_proc| Variant {
        name,
        bench,
        contained,
        private_proc,
    };
    let variants = [
        variant(
            "floor: spawn::run, uncontained, unsandboxed",
            None,
            false,
            false,
        ),
        variant("pid namespace, host /proc (before)", None, true, false),
        variant(
            "pid namespace + private /proc (sandbox: false)",
            None,
            true,
            true,
        ),
        variant(
            "  Landlock (+ signal scope), private /proc",
            Some(bench(&landlock)),
            true,
            true,
        ),
        variant(
            "  + seccomp socket filter, abstract scope",
            Some(bench(&seccomp)),
            true,
            true,
        ),
        variant(
            "  + the binds before issue 22, host /proc",
            Some(bench(&old_binds)),
            true,
            false,
        ),
        variant(
            "  + every bind of issue 22, host /proc",
            Some(bench(&project)),
            true,
            false,
        ),
        variant(
            "  + every bind + private /proc (project hook now)",
            Some(bench(&project)),
            true,
            true,
        ),
    ];
    let run = |v: &Variant<'_>| -> Result<Duration, String> {
        spawn::set_containment_for_benchmarks(v.contained);
        spawn::set_private_proc_for_benchmarks(v.private_proc);
        let plain = bench(&landlock);
        let result = match &v.bench {
            Some(b) => b.sandboxed(),
            None => plain.plain(),
        };
        spawn::set_containment_for_benchmarks(true);
        spawn::set_private_proc_for_benchmarks(true);
        result
    };

    for round in 0..WARMUP {
        for v in &variants {
            let _ = run(v);
        }
        black_box(round);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(ITERS); variants.len()];
    let mut failures = 0usize;
    let mut first_failure = None;
    for round in 0..ITERS {
        // Rotate the order every round so no variant always follows the same one.
        for k in 0..variants.len() {
            let v = (round + k) % variants.len();
            let Some(variant) = variants.get(v) else {
                continue;
            };
            match run(variant) {
                Ok(d) => {
                    if let Some(into) = samples.get_mut(v) {
                        into.push(d);
                    }
                }
                Err(e) => {
                    failures += 1;
                    first_failure.get_or_insert(format!("{}: {e}", variant.name));
                }
            }
        }
    }

    println!("{ITERS} interleaved rounds, after {WARMUP} warm-up rounds\n");
    println!("{:<52} {:>10} {:>10} {:>10}", "", "median", "p10", "p90");
    let medians: Vec<Option<Duration>> = variants
        .iter()
        .zip(samples.iter_mut())
        .map(|(v, samples)| row(v.name, samples))
        .collect();
    println!();
    let m = |i: usize| medians.get(i).copied().flatten();
    let us = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) => format!("{:+.1} us", (a.as_secs_f64() - b.as_secs_f64()) * 1e6),
        _ => "-".to_owned(),
    };
    let ratio = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) if !b.is_zero() => format!("{:.3}x", a.as_secs_f64() / b.as_secs_f64()),
        _ => "-".to_owned(),
    };
    println!("cost of each layer (differences of medians):");
    println!("  pid namespace (containment):          {}", us(m(1), m(0)));
    println!("  private /proc, unsandboxed:           {}", us(m(2), m(1)));
    println!("  Landlock ruleset, TMPDIR, report:     {}", us(m(3), m(2)));
    println!("  seccomp filter + abstract scope:      {}", us(m(4), m(3)));
    println!("  extra binds of issue 22:              {}", us(m(6), m(5)));
    println!("  private /proc, sandboxed:             {}", us(m(7), m(6)));
    println!("\nratios (medians, one run):");
    println!(
        "  private /proc / host /proc, unsandboxed:        {}",
        ratio(m(2), m(1))
    );
    println!(
        "  unsandboxed hook now / spawn floor:             {}",
        ratio(m(2), m(0))
    );
    println!(
        "  project hook: (private /proc + all binds) / (old binds, host /proc): {}",
        ratio(m(7), m(5))
    );
    println!(
        "  project hook now (all layers) / spawn floor:    {}",
        ratio(m(7), m(0))
    );
    if let (Some(now), Some(before)) = (m(7), m(5))
        && !before.is_zero()
    {
        let r = now.as_secs_f64() / before.as_secs_f64();
        println!(
            "\nprivate /proc + extra binds: {r:.3}x the same sandbox before them   target <= {TARGET_RATIO:.2}x   {}",
            if r <= TARGET_RATIO { "PASS" } else { "MISS" }
        );
    }
    if failures > 0 {
        println!(
            "{failures} runs failed; first: {}",
            first_failure.unwrap_or_default()
        );
    }
}

struct Bench<'a> {
    sandbox: &'a LinuxSandbox,
    policy: &'a SandboxPolicy,
    cwd: &'a Path,
}

impl Bench<'_> {
    fn env() -> Vec<(OsString, OsString)> {
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
    }

    fn check(out: &spawn::SpawnOutput) -> Result<(), String> {
        if out.exit_code == Some(0) && out.stdout == EXPECTED {
            Ok(())
        } else {
            Err(format!(
                "unexpected result: exit {:?}, stdout {:?}, stderr {:?}",
                out.exit_code,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn plain(&self) -> Result<Duration, String> {
        let env = Self::env();
        let start = Instant::now();
        let req = SpawnRequest {
            command: HOOK,
            cwd: self.cwd,
            env: &env,
            stdin: STDIN,
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            child_setup: None,
        };
        let out = spawn::run(&req).map_err(|e| e.to_string())?;
        let elapsed = start.elapsed();
        Self::check(&out)?;
        Ok(elapsed)
    }

    fn sandboxed(&self) -> Result<Duration, String> {
        let mut env = Self::env();
        let start = Instant::now();
        let prepared = self
            .sandbox
            .prepare(self.policy)
            .map_err(|e| e.to_string())?;
        env.push(("TMPDIR".into(), prepared.tmpdir().as_os_str().to_owned()));
        let req = SpawnRequest {
            command: HOOK,
            cwd: self.cwd,
            env: &env,
            stdin: STDIN,
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            child_setup: Some(prepared.as_child_setup()),
        };
        let out = spawn::run(&req).map_err(|e| e.to_string())?;
        let verdict = prepared.detect(out.exit_code);
        drop(prepared);
        let elapsed = start.elapsed();
        black_box(verdict);
        Self::check(&out)?;
        Ok(elapsed)
    }
}

/// Prints a row (µs) and returns the median.
fn row(label: &str, samples: &mut [Duration]) -> Option<Duration> {
    samples.sort_unstable();
    let at = |q: f64| -> Option<Duration> {
        let last = samples.len().checked_sub(1)?;
        // Nearest rank; the product is within [0, last], so the cast is exact enough.
        let index = ((last as f64) * q).round() as usize;
        samples.get(index.min(last)).copied()
    };
    let us = |d: Option<Duration>| {
        d.map_or_else(
            || "-".to_owned(),
            |d| format!("{:.1} us", d.as_secs_f64() * 1e6),
        )
    };
    let median = at(0.5);
    println!(
        "{label:<52} {:>10} {:>10} {:>10}",
        us(median),
        us(at(0.1)),
        us(at(0.9))
    );
    median
}
