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
const TARGET_RATIO: f64 = 1.10;

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
    // A workspace as a project hook sees it: a git repository with a Cursor config, so
    // the protected paths exist and are really bound read-only.
    for dir in [".git/hooks", ".git/info", ".cursor"] {
        let _ = std::fs::create_dir_all(workspace.path().join(dir));
    }
    let _ = std::fs::write(workspace.path().join(".git/config"), "[core]\n");
    let _ = std::fs::write(workspace.path().join(".cursor/hooks.json"), "{}");
    let home = workspace.path().join("home");
    let landlock = SandboxPolicy::new([workspace.path()]);
    let seccomp = landlock.clone().unix_sockets(false);
    let project = seccomp
        .clone()
        .protected(copse_hooks::sandbox::protected_paths(
            &home,
            &home.join(".copse"),
            &[workspace.path().to_path_buf()],
        ));
    let bench = |policy| Bench {
        sandbox: &sandbox,
        policy,
        cwd: workspace.path(),
    };
    let variants = [
        ("spawn::run, unsandboxed, uncontained (before)", None),
        ("spawn::run, unsandboxed (pid namespace)", None),
        (
            "  sandboxed: Landlock (+ signal scope)",
            Some(bench(&landlock)),
        ),
        (
            "  + seccomp socket filter, abstract scope",
            Some(bench(&seccomp)),
        ),
        (
            "  + read-only binds (project hook, all layers)",
            Some(bench(&project)),
        ),
    ];
    let plain = bench(&landlock);
    let run = |v: usize| -> Result<Duration, String> {
        match variants.get(v) {
            Some((_, Some(b))) => b.sandboxed(),
            _ if v == 0 => {
                spawn::set_containment_for_benchmarks(false);
                let r = plain.plain();
                spawn::set_containment_for_benchmarks(true);
                r
            }
            _ => plain.plain(),
        }
    };

    for round in 0..WARMUP {
        for v in 0..variants.len() {
            let _ = run(v);
        }
        black_box(round);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(ITERS); variants.len()];
    let mut prepare = Vec::with_capacity(ITERS);
    let mut failures = 0usize;
    let mut first_failure = None;
    for round in 0..ITERS {
        // Rotate the order every round so no variant always follows the same one.
        for k in 0..variants.len() {
            let v = (round + k) % variants.len();
            match run(v) {
                Ok(d) => {
                    if let Some(into) = samples.get_mut(v) {
                        into.push(d);
                    }
                }
                Err(e) => {
                    failures += 1;
                    first_failure.get_or_insert(e);
                }
            }
        }
        if let Ok(d) = bench(&project).prepare_only() {
            prepare.push(d);
        }
    }

    println!("{ITERS} interleaved rounds, after {WARMUP} warm-up rounds\n");
    println!("{:<52} {:>10} {:>10} {:>10}", "", "median", "p10", "p90");
    let medians: Vec<Option<Duration>> = variants
        .iter()
        .zip(samples.iter_mut())
        .map(|((name, _), samples)| row(name, samples))
        .collect();
    row("  project policy: prepare() + drop alone", &mut prepare);
    println!();
    let us = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) => format!("{:+.1} us", (a.as_secs_f64() - b.as_secs_f64()) * 1e6),
        _ => "-".to_owned(),
    };
    let m = |i: usize| medians.get(i).copied().flatten();
    println!("cost of each layer (differences of medians):");
    println!("  pid namespace (containment):        {}", us(m(1), m(0)));
    println!("  Landlock ruleset, TMPDIR, report:    {}", us(m(2), m(1)));
    println!("  seccomp filter + abstract scope:     {}", us(m(3), m(2)));
    println!("  mount namespace + read-only binds:   {}", us(m(4), m(3)));
    match (m(4), m(1)) {
        (Some(full), Some(plain)) if !plain.is_zero() => {
            let ratio = full.as_secs_f64() / plain.as_secs_f64();
            println!(
                "\nsandboxed (all layers) / unsandboxed (medians): {ratio:.3}x   target <= {TARGET_RATIO:.2}x   {}",
                if ratio <= TARGET_RATIO {
                    "PASS"
                } else {
                    "MISS"
                }
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
