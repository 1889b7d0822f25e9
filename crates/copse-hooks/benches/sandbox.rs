//! Sandbox overhead benchmark: `cargo bench -p copse-hooks --bench sandbox`.
//!
//! Plain `std` timing, no harness. A trivial hook (`cat >/dev/null; echo '{}'`, fed a
//! small JSON payload) through `spawn::run`, unsandboxed against sandboxed, interleaved
//! (the order alternates every iteration, so machine noise hits both) and compared by
//! median. The sandboxed timing covers everything the runner adds per run:
//! `Sandbox::prepare` (private temp dir, path fds, ruleset), the Landlock setup in the
//! child, `detect` and the drop (temp dir removal). A miss of the target is reported,
//! never asserted; the binary never panics and exits 0 unless it cannot run at all.
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
const TARGET_RATIO: f64 = 1.15;

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
    let policy = SandboxPolicy::new([workspace.path()]);
    let bench = Bench {
        sandbox: &sandbox,
        policy: &policy,
        cwd: workspace.path(),
    };

    for i in 0..WARMUP {
        let _ = bench.plain();
        let _ = bench.sandboxed();
        let _ = bench.prepare_only();
        black_box(i);
    }

    let mut plain = Vec::with_capacity(ITERS);
    let mut sandboxed = Vec::with_capacity(ITERS);
    let mut prepare = Vec::with_capacity(ITERS);
    let mut failures = 0usize;
    let mut first_failure = None;
    let mut record = |result: Result<Duration, String>, into: &mut Vec<Duration>| match result {
        Ok(d) => into.push(d),
        Err(e) => {
            failures += 1;
            first_failure.get_or_insert(e);
        }
    };
    for i in 0..ITERS {
        if i % 2 == 0 {
            record(bench.plain(), &mut plain);
            record(bench.sandboxed(), &mut sandboxed);
        } else {
            record(bench.sandboxed(), &mut sandboxed);
            record(bench.plain(), &mut plain);
        }
        record(bench.prepare_only(), &mut prepare);
    }

    println!("{ITERS} interleaved runs each, after {WARMUP} warm-up runs\n");
    println!("{:<52} {:>10} {:>10} {:>10}", "", "median", "p10", "p90");
    let plain_median = row("spawn::run, unsandboxed", &mut plain);
    let sandboxed_median = row(
        "spawn::run, sandboxed (prepare+run+detect+drop)",
        &mut sandboxed,
    );
    row("  of which prepare() + drop alone (no spawn)", &mut prepare);
    println!();
    match (plain_median, sandboxed_median) {
        (Some(plain), Some(sandboxed)) if !plain.is_zero() => {
            let ratio = sandboxed.as_secs_f64() / plain.as_secs_f64();
            println!(
                "sandboxed / unsandboxed (medians): {ratio:.3}x   target <= {TARGET_RATIO:.2}x   {}",
                if ratio <= TARGET_RATIO {
                    "PASS"
                } else {
                    "MISS"
                }
            );
            println!(
                "added per run (medians): {:.1} us",
                (sandboxed.as_secs_f64() - plain.as_secs_f64()) * 1e6
            );
        }
        _ => println!("no ratio: not enough successful runs"),
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

    fn prepare_only(&self) -> Result<Duration, String> {
        let start = Instant::now();
        let prepared = self
            .sandbox
            .prepare(self.policy)
            .map_err(|e| e.to_string())?;
        black_box(prepared.tmpdir());
        drop(prepared);
        Ok(start.elapsed())
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
