//! Gate latency benchmark: `cargo bench -p copse-hooks --bench gate`.
//!
//! Plain `std` timing, no harness. Every figure is measured in one run next to a
//! baseline measured in the same run (interleaved, so machine noise hits both), and
//! printed beside its target with PASS/MISS. A miss is reported, never asserted: the
//! binary always exits 0 unless the benchmark's own setup is broken.
//!
//! 1. Per-hook overhead: one trivial Cursor `beforeShellExecution` hook through
//!    `Session::gate_tool`, against the physical floor, a raw `posix_spawn` of the same
//!    `/bin/sh -c <command>` with the same stdin bytes, both pipes read to EOF and the
//!    child reaped. Two diagnostic rows sit in between to locate the overhead: a raw
//!    `fork`+`execve` (what a spawn costs once `posix_spawn`'s vfork path is lost) and
//!    `copse_hooks::spawn::run` alone (the supervised spawn without discovery, matching,
//!    marshalling or interpretation).
//! 2. Hooks off: `gate_tool` with `enabled(false)`, ns per gate over a long loop.
//! 3. 100 non-matching hooks (plain alternations and lookaround patterns): µs per gate,
//!    with proof that nothing was spawned (no run records, no marker files), against an
//!    empty config.
//! 4. Fan-out: 8 matching hooks that each sleep 0.1 s, wall time of one gate, against a
//!    single such hook.
//!
//! `COPSE_GATE_BENCH_LOOP=<what>:<n>` runs only a loop of `n` gates instead, for counting
//! their syscalls under `strace` (see `syscall_loop`).
//!
//! Linux only (pipe2, pidfd-based library spawn).

// reason: a benchmark binary, not library code; a broken setup (no temp dir, no
// /bin/sh) should abort loudly, while target misses are only reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{CString, OsString};
use std::hint::black_box;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use copse_hooks::spawn::{self, Limits, SpawnRequest};
use copse_hooks::{
    Decision, Engine, EngineConfig, EventPayload, RunOutcome, Session, SessionIdentity, ToolCall,
    Verdict,
};
use serde_json::{Map, Value, json};

/// The trivial hook: drain stdin, allow.
const TRIVIAL_HOOK: &str = r#"cat >/dev/null; echo '{"permission":"allow"}'"#;
/// What it prints.
const TRIVIAL_STDOUT: &[u8] = b"{\"permission\":\"allow\"}\n";
/// The shell command being gated in every section (never matched in section 3).
const SUBJECT: &str = "git status --short";

const SPAWN_WARMUP: usize = 30;
const SPAWN_ITERS: usize = 300;
const OFF_ITERS: u32 = 1_000_000;
const NOMATCH_BLOCKS: usize = 20;
const NOMATCH_BLOCK_LEN: u32 = 500;
const FANOUT_HOOKS: usize = 8;
const FANOUT_RUNS: usize = 10;

fn main() {
    if let Some(spec) = std::env::var_os("COPSE_GATE_BENCH_LOOP") {
        syscall_loop(&spec.to_string_lossy());
        return;
    }
    println!("copse-hooks gate benchmark (pid {})", std::process::id());
    println!("all ratios are against a baseline measured in this run, interleaved\n");
    per_hook_overhead();
    hooks_off();
    non_matching();
    fan_out();
}

// ---------------------------------------------------------------------------------
// Fixtures and reporting helpers
// ---------------------------------------------------------------------------------

/// A temp HOME with `~/.cursor/hooks.json`, a temp workspace, and an engine over them.
struct Fixture {
    home: tempfile::TempDir,
    _workspace: tempfile::TempDir,
    engine: Engine,
}

impl Fixture {
    fn new(hooks: &Value, enabled: bool) -> Fixture {
        Fixture::with_sandbox(hooks, enabled, true)
    }

    fn with_sandbox(hooks: &Value, enabled: bool, sandbox: bool) -> Fixture {
        let home = tempfile::tempdir().expect("temp home");
        let workspace = tempfile::tempdir().expect("temp workspace");
        let cursor = home.path().join(".cursor");
        std::fs::create_dir_all(&cursor).expect("create ~/.cursor");
        let doc = json!({"version": 1, "hooks": hooks});
        std::fs::write(cursor.join("hooks.json"), doc.to_string()).expect("write hooks.json");
        let mut config = EngineConfig::from_process(vec![workspace.path().to_path_buf()])
            .home(home.path())
            .enabled(enabled);
        config.sandbox = sandbox;
        let engine = Engine::new(config);
        Fixture {
            home,
            _workspace: workspace,
            engine,
        }
    }

    fn session(&self) -> Session {
        self.engine.session(SessionIdentity::new("bench"))
    }

    /// The directory the engine runs a user hook in.
    fn hook_cwd(&self) -> PathBuf {
        self.home.path().join(".cursor")
    }
}

fn shell_call(command: &str) -> ToolCall {
    let mut input = Map::new();
    input.insert("command".into(), Value::String(command.into()));
    ToolCall::new("run_shell", input)
}

fn entries<I: IntoIterator<Item = Value>>(items: I) -> Value {
    json!({ "beforeShellExecution": items.into_iter().collect::<Vec<_>>() })
}

/// Whether a verdict is the clean allow of `hooks` successful runs.
fn all_allowed(verdict: &Verdict, hooks: usize) -> bool {
    verdict.effective_decision() == Decision::Allow
        && verdict.runs.len() == hooks
        && verdict
            .runs
            .iter()
            .all(|r| r.result == RunOutcome::Allow && r.failure.is_none())
}

fn sorted(mut samples: Vec<Duration>) -> Vec<Duration> {
    samples.sort_unstable();
    samples
}

/// Nearest-rank percentile of sorted samples.
fn pct(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(Duration::ZERO)
}

fn median(sorted: &[Duration]) -> Duration {
    pct(sorted, 50)
}

fn human(d: Duration) -> String {
    let ns = d.as_secs_f64() * 1e9;
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(f64::MIN_POSITIVE)
}

fn verdict_word(pass: bool) -> &'static str {
    if pass { "PASS" } else { "MISS" }
}

fn rule() {
    println!("{}", "-".repeat(96));
}

// ---------------------------------------------------------------------------------
// Syscall-count harness
// ---------------------------------------------------------------------------------

/// `COPSE_GATE_BENCH_LOOP=<what>:<n>` (`what`: `gate`, `sandboxed`, `spawn`, or
/// `persistent`: a gate answered by a persistent Copse hook, a `sh` loop): one warm-up run,
/// then `n` more of the same in this process, and nothing else. For counting the
/// syscalls a run costs a long-lived host, e.g.
/// `COPSE_GATE_BENCH_LOOP=gate:1000 strace -f -c <bench binary>` against `gate:0`: the
/// difference divided by `n` is the per-gate cost of the host and its hooks together;
/// without `-f`, of the host alone (the gates run on its main thread).
fn syscall_loop(spec: &str) {
    let (what, n) = spec.split_once(':').unwrap_or((spec, "1000"));
    let n: usize = n.parse().expect("COPSE_GATE_BENCH_LOOP=<what>:<count>");
    // The persistent hook's engine reads this home too: no Cursor hook there then.
    let cursor_hooks = if what == "persistent" {
        entries([])
    } else {
        entries([json!({"command": TRIVIAL_HOOK})])
    };
    let fx = Fixture::with_sandbox(&cursor_hooks, true, what == "sandboxed");
    let persistent = (what == "persistent").then(|| {
        let copse_dir = fx.home.path().join(".copse");
        std::fs::create_dir_all(&copse_dir).expect("create the copse dir");
        let hook = r#"echo '{"hello":{"protocol":1,"events":["toolGate"]}}'
while IFS= read -r line; do
  id=${line#*'"id":'}; id=${id%%,*}
  echo "{\"id\":$id,\"response\":{\"decision\":\"allow\"}}"
done"#;
        let script = copse_dir.join("persistent.sh");
        std::fs::write(&script, hook).expect("write the persistent hook");
        let entry = json!({"command": format!("sh {}", script.display()), "persistent": true});
        let doc = json!({"version": 1, "hooks": {"toolGate": [entry]}});
        std::fs::write(copse_dir.join("hooks.json"), doc.to_string()).expect("write hooks.json");
        let workspace = fx.home.path().join("ws");
        std::fs::create_dir_all(&workspace).expect("create the workspace");
        let mut config = EngineConfig::from_process(vec![workspace])
            .home(fx.home.path())
            .enabled(true);
        config.copse_dir = copse_dir;
        Engine::new(config)
    });
    let session = match &persistent {
        Some(engine) => engine.session(SessionIdentity::new("bench")),
        None => fx.session(),
    };
    let call = shell_call(SUBJECT);
    let first = session.gate_tool(call.clone());
    assert!(
        all_allowed(&first, 1),
        "the trivial hook did not allow cleanly: {first:?}"
    );
    let payload = first
        .runs
        .first()
        .map(|r| r.stdin.clone())
        .unwrap_or_default();
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let cwd = fx.hook_cwd();
    let request = SpawnRequest {
        command: TRIVIAL_HOOK,
        cwd: &cwd,
        env: &env,
        stdin: &payload,
        timeout: Duration::from_secs(30),
        limits: Limits::default(),
        child_setup: None,
    };
    let ok = |out: spawn::SpawnOutput| out.exit_code == Some(0) && out.stdout == TRIVIAL_STDOUT;
    if what == "spawn" {
        assert!(spawn::run(&request).is_ok_and(ok), "warm-up spawn failed");
    }
    let start = Instant::now();
    let mut bad = 0;
    for _ in 0..n {
        let good = match what {
            "spawn" => spawn::run(&request).is_ok_and(ok),
            _ => all_allowed(&session.gate_tool(call.clone()), 1),
        };
        bad += usize::from(!good);
    }
    let per = start
        .elapsed()
        .checked_div(u32::try_from(n.max(1)).unwrap_or(u32::MAX));
    println!(
        "{n} × {what}: {} each, {bad} failed",
        human(per.unwrap_or(Duration::ZERO))
    );
}

// ---------------------------------------------------------------------------------
// 1. Per-hook overhead
// ---------------------------------------------------------------------------------

/// Owned C strings for `execve`/`posix_spawn`, plus the NULL-terminated pointer arrays.
struct ExecArgs {
    path: CString,
    _argv: Vec<CString>,
    _envp: Vec<CString>,
    argv_ptrs: Vec<*mut libc::c_char>,
    envp_ptrs: Vec<*mut libc::c_char>,
}

impl ExecArgs {
    fn new(command: &str, env: &[(OsString, OsString)]) -> ExecArgs {
        let argv: Vec<CString> = ["/bin/sh", "-c", command]
            .iter()
            .map(|s| CString::new(*s).expect("no NUL in argv"))
            .collect();
        let envp: Vec<CString> = env
            .iter()
            .filter_map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                CString::new(kv).ok()
            })
            .collect();
        let ptrs = |v: &[CString]| -> Vec<*mut libc::c_char> {
            v.iter()
                .map(|s| s.as_ptr().cast_mut())
                .chain(std::iter::once(std::ptr::null_mut()))
                .collect()
        };
        ExecArgs {
            path: CString::new("/bin/sh").expect("no NUL"),
            argv_ptrs: ptrs(&argv),
            envp_ptrs: ptrs(&envp),
            _argv: argv,
            _envp: envp,
        }
    }
}

/// The three pipes of a child: (child end, parent end) each.
struct Pipes {
    stdin_r: OwnedFd,
    stdin_w: OwnedFd,
    stdout_r: OwnedFd,
    stdout_w: OwnedFd,
    stderr_r: OwnedFd,
    stderr_w: OwnedFd,
}

fn cloexec_pipe() -> (OwnedFd, OwnedFd) {
    let mut fds: [libc::c_int; 2] = [-1; 2];
    // SAFETY: `fds` is a valid, writable array of two c_ints.
    let ret = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(ret, 0, "pipe2: {}", std::io::Error::last_os_error());
    let [r, w] = fds;
    // SAFETY: pipe2 succeeded, so both fds are fresh and owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(r), OwnedFd::from_raw_fd(w)) }
}

impl Pipes {
    fn new() -> Pipes {
        let (stdin_r, stdin_w) = cloexec_pipe();
        let (stdout_r, stdout_w) = cloexec_pipe();
        let (stderr_r, stderr_w) = cloexec_pipe();
        Pipes {
            stdin_r,
            stdin_w,
            stdout_r,
            stdout_w,
            stderr_r,
            stderr_w,
        }
    }

    /// Parent side after the spawn: close the child's ends, write stdin and close it,
    /// read stdout and stderr to EOF (with poll, so neither pipe can stall the other),
    /// reap the child. Returns whether it exited 0 having printed `expected`.
    fn finish(self, pid: libc::pid_t, stdin: &[u8], expected: &[u8]) -> bool {
        let Pipes {
            stdin_r,
            stdin_w,
            stdout_r,
            stdout_w,
            stderr_r,
            stderr_w,
        } = self;
        drop((stdin_r, stdout_w, stderr_w));
        write_all(&stdin_w, stdin);
        drop(stdin_w);
        let out = read_both(&stdout_r, &stderr_r);
        let status = reap(pid);
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 && out == expected
    }
}

fn write_all(fd: &OwnedFd, mut data: &[u8]) {
    while !data.is_empty() {
        // SAFETY: `data` is valid for reads of `data.len()` bytes.
        let n = unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) };
        match usize::try_from(n) {
            Ok(n) => data = data.get(n..).unwrap_or_default(),
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            }
            // EPIPE: the child is gone or closed stdin; the exit status tells.
            Err(_) => return,
        }
    }
}

/// Reads both pipes to EOF; returns stdout.
fn read_both(stdout: &OwnedFd, stderr: &OwnedFd) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let mut open = [Some(stdout.as_raw_fd()), Some(stderr.as_raw_fd())];
    while open.iter().any(Option::is_some) {
        let mut fds: Vec<libc::pollfd> = open
            .iter()
            .map(|fd| libc::pollfd {
                fd: fd.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let nfds = libc::nfds_t::try_from(fds.len()).expect("two fds");
        // SAFETY: `fds` holds `nfds` initialised pollfds (negative fds are ignored).
        let ret = unsafe { libc::poll(fds.as_mut_ptr(), nfds, -1) };
        if ret < 0 {
            assert_eq!(
                std::io::Error::last_os_error().kind(),
                std::io::ErrorKind::Interrupted,
                "poll failed"
            );
            continue;
        }
        for (i, pfd) in fds.iter().enumerate() {
            if pfd.fd < 0 || pfd.revents == 0 {
                continue;
            }
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
            let n = unsafe { libc::read(pfd.fd, buf.as_mut_ptr().cast(), buf.len()) };
            match usize::try_from(n) {
                Ok(0) => {
                    if let Some(slot) = open.get_mut(i) {
                        *slot = None;
                    }
                }
                Ok(n) if i == 0 => out.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Ok(_) => {}
                Err(_) => assert_eq!(
                    std::io::Error::last_os_error().kind(),
                    std::io::ErrorKind::Interrupted,
                    "read failed"
                ),
            }
        }
    }
    out
}

fn reap(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid, writable c_int; `pid` is our unreaped child.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            return status;
        }
        assert_eq!(
            std::io::Error::last_os_error().kind(),
            std::io::ErrorKind::Interrupted,
            "waitpid failed"
        );
    }
}

/// The floor: `posix_spawn` (glibc: clone(CLONE_VM|CLONE_VFORK)) with file actions
/// that dup the pipe ends onto 0/1/2 (the originals are close-on-exec).
fn raw_posix_spawn(args: &ExecArgs, stdin: &[u8]) -> bool {
    let pipes = Pipes::new();
    // SAFETY: all-zeroes is a valid placeholder; posix_spawn_file_actions_init
    // initialises it before any other use.
    let mut actions: libc::posix_spawn_file_actions_t = unsafe { std::mem::zeroed() };
    let mut pid: libc::pid_t = 0;
    // SAFETY: `actions` is initialised before use and destroyed exactly once; the fds
    // are open for the duration of the spawn; `path`, `argv_ptrs` and `envp_ptrs` are
    // NUL-terminated strings in NULL-terminated arrays owned by `args`, which outlives
    // the call; a null attr pointer means default attributes.
    let ret = unsafe {
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawn_file_actions_adddup2(&mut actions, pipes.stdin_r.as_raw_fd(), 0);
        libc::posix_spawn_file_actions_adddup2(&mut actions, pipes.stdout_w.as_raw_fd(), 1);
        libc::posix_spawn_file_actions_adddup2(&mut actions, pipes.stderr_w.as_raw_fd(), 2);
        let ret = libc::posix_spawn(
            &mut pid,
            args.path.as_ptr(),
            &actions,
            std::ptr::null(),
            args.argv_ptrs.as_ptr(),
            args.envp_ptrs.as_ptr(),
        );
        libc::posix_spawn_file_actions_destroy(&mut actions);
        ret
    };
    if ret != 0 {
        return false;
    }
    pipes.finish(pid, stdin, TRIVIAL_STDOUT)
}

/// Diagnostic: a plain `fork` + `execve` (what std's `Command` does once a `pre_exec`
/// hook is installed), with the same pipes.
fn raw_fork_exec(args: &ExecArgs, stdin: &[u8]) -> bool {
    let pipes = Pipes::new();
    let (i, o, e) = (
        pipes.stdin_r.as_raw_fd(),
        pipes.stdout_w.as_raw_fd(),
        pipes.stderr_w.as_raw_fd(),
    );
    let (path, argv, envp) = (
        args.path.as_ptr(),
        args.argv_ptrs.as_ptr().cast::<*const libc::c_char>(),
        args.envp_ptrs.as_ptr().cast::<*const libc::c_char>(),
    );
    // SAFETY: fork has no memory-safety preconditions; the child below only makes
    // async-signal-safe calls (dup2, execve, _exit) on data prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the forked child: dup2/execve/_exit are async-signal-safe, the
        // pointers come from `args`, which the child's copy of memory still holds, and
        // _exit never returns (nothing is unwound or flushed twice).
        unsafe {
            libc::dup2(i, 0);
            libc::dup2(o, 1);
            libc::dup2(e, 2);
            libc::execve(path, argv, envp);
            libc::_exit(127);
        }
    }
    if pid < 0 {
        return false;
    }
    pipes.finish(pid, stdin, TRIVIAL_STDOUT)
}

struct Series {
    name: &'static str,
    samples: Vec<Duration>,
    bad: usize,
}

impl Series {
    fn new(name: &'static str) -> Series {
        Series {
            name,
            samples: Vec::with_capacity(SPAWN_ITERS),
            bad: 0,
        }
    }
}

fn per_hook_overhead() {
    // The engine's own overhead is measured unsandboxed, against the raw spawn floor;
    // the sandbox's cost (its own target, see `benches/sandbox.rs`) is the last row.
    let fx = Fixture::with_sandbox(&entries([json!({"command": TRIVIAL_HOOK})]), true, false);
    let session = fx.session();
    let fx_sandboxed = Fixture::new(&entries([json!({"command": TRIVIAL_HOOK})]), true);
    let sandboxed = fx_sandboxed.session();
    let call = shell_call(SUBJECT);

    // One gate first: it parses the config (cached afterwards) and tells us the exact
    // stdin bytes the hook receives, which the raw spawns then send too.
    let first = session.gate_tool(call.clone());
    assert!(
        all_allowed(&first, 1),
        "the trivial hook did not allow cleanly: {first:?}"
    );
    let payload = first
        .runs
        .first()
        .map(|r| r.stdin.clone())
        .unwrap_or_default();

    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let args = ExecArgs::new(TRIVIAL_HOOK, &env);
    let cwd = fx.hook_cwd();
    let request = SpawnRequest {
        command: TRIVIAL_HOOK,
        cwd: &cwd,
        env: &env,
        stdin: &payload,
        timeout: Duration::from_secs(30),
        limits: Limits::default(),
        child_setup: None,
    };

    let mut series = [
        Series::new("raw posix_spawn + pipes (floor)"),
        Series::new("raw fork+execve + pipes (diagnostic)"),
        Series::new("copse_hooks::spawn::run (diagnostic)"),
        Series::new("Session::gate_tool, 1 hook"),
        Series::new("Session::gate_tool, 1 hook, sandboxed"),
        Series::new("Session::gate_tool, 1 hook, uncontained (before)"),
    ];
    let variants = series.len();
    for round in 0..SPAWN_WARMUP + SPAWN_ITERS {
        // Rotate the order every round (ABCD, BCDA, ...) so no variant always runs
        // right after the same neighbour.
        for k in 0..variants {
            let v = (round + k) % variants;
            let call = call.clone();
            let start = Instant::now();
            let ok = match v {
                0 => raw_posix_spawn(&args, &payload),
                1 => raw_fork_exec(&args, &payload),
                2 => spawn::run(&request)
                    .is_ok_and(|out| out.exit_code == Some(0) && out.stdout == TRIVIAL_STDOUT),
                3 => all_allowed(&session.gate_tool(call), 1),
                4 => all_allowed(&sandboxed.gate_tool(call), 1),
                _ => {
                    // As before pid namespaces: the baseline of the kill mechanism.
                    spawn::set_containment_for_benchmarks(false);
                    let ok = all_allowed(&session.gate_tool(call), 1);
                    spawn::set_containment_for_benchmarks(true);
                    ok
                }
            };
            let elapsed = start.elapsed();
            if round >= SPAWN_WARMUP
                && let Some(s) = series.get_mut(v)
            {
                s.samples.push(elapsed);
                s.bad += usize::from(!ok);
            }
        }
    }

    let stats: Vec<(Duration, Duration)> = series
        .iter()
        .map(|s| {
            let sorted = sorted(s.samples.clone());
            (median(&sorted), pct(&sorted, 90))
        })
        .collect();
    let floor = stats.first().map(|s| s.0).unwrap_or(Duration::ZERO);

    println!(
        "1. Per-hook overhead: one trivial beforeShellExecution hook ({} interleaved rounds after {} warm-up)",
        SPAWN_ITERS, SPAWN_WARMUP
    );
    println!("   hook: {TRIVIAL_HOOK}   stdin: {} bytes", payload.len());
    rule();
    println!(
        "   {:<40} {:>11} {:>11} {:>10}  {:>8}",
        "variant", "median", "p90", "vs floor", "failures"
    );
    for (s, (med, p90)) in series.iter().zip(&stats) {
        println!(
            "   {:<40} {:>11} {:>11} {:>9.2}×  {:>8}",
            s.name,
            human(*med),
            human(*p90),
            ratio(*med, floor),
            s.bad
        );
    }
    rule();
    let gate = stats.get(3).map(|s| s.0).unwrap_or(Duration::ZERO);
    let r = ratio(gate, floor);
    println!(
        "   gate_tool / floor (medians): {r:.2}×   target ≤ 1.10×   {}   (overhead {:+.1} µs per hook)",
        verdict_word(r <= 1.10),
        (gate.as_secs_f64() - floor.as_secs_f64()) * 1e6
    );
    if let Some((sandboxed, _)) = stats.get(4) {
        let rs = ratio(*sandboxed, gate);
        println!(
            "   sandboxed gate / unsandboxed gate (medians): {rs:.2}×   target ≤ 1.15×   {}",
            verdict_word(rs <= 1.15)
        );
    }
    if let (Some((contained, _)), Some((before, _))) = (stats.get(3), stats.get(5)) {
        let rc = ratio(*contained, *before);
        println!(
            "   gate with the pid-namespace kill mechanism / without (medians): {rc:.2}×   target ≤ 1.05×   {}",
            verdict_word(rc <= 1.05)
        );
    }
    if let [_, fork, lib, _, _, _] = stats.as_slice() {
        println!(
            "   where it goes (differences of medians): vfork→fork {:+.1} µs, rest of spawn::run {:+.1} µs, engine around the spawn {:+.1} µs",
            (fork.0.as_secs_f64() - floor.as_secs_f64()) * 1e6,
            (lib.0.as_secs_f64() - fork.0.as_secs_f64()) * 1e6,
            (gate.as_secs_f64() - lib.0.as_secs_f64()) * 1e6,
        );
    }
    if series.iter().any(|s| s.bad > 0) {
        println!("   WARNING: some runs did not produce the expected clean allow (see failures)");
    }
    println!();
}

// ---------------------------------------------------------------------------------
// 2. Hooks off
// ---------------------------------------------------------------------------------

fn hooks_off() {
    // A config that would spawn for every call, so only the off switch keeps it quiet.
    let fx = Fixture::new(&entries([json!({"command": TRIVIAL_HOOK})]), false);
    let session = fx.session();
    let call = shell_call(SUBJECT);
    let payload = EventPayload::ToolGate(call.clone());

    let check = session.gate_tool(call.clone());
    let quiet = check.runs.is_empty() && check.effective_decision() == Decision::Allow;

    let time_loop = |f: &dyn Fn()| {
        for _ in 0..OFF_ITERS / 10 {
            f();
        }
        let start = Instant::now();
        for _ in 0..OFF_ITERS {
            f();
        }
        start.elapsed() / OFF_ITERS
    };
    // Interleave the three loops twice and keep the better of each (loops this short
    // mostly see noise in the form of one-sided preemption).
    let mut best = [Duration::MAX; 3];
    for _ in 0..2 {
        let times = [
            time_loop(&|| drop(black_box(black_box(&call).clone()))),
            time_loop(&|| drop(black_box(session.gate_tool(black_box(&call).clone())))),
            time_loop(&|| drop(black_box(session.fire_blocking(black_box(&payload))))),
        ];
        for (b, t) in best.iter_mut().zip(times) {
            *b = (*b).min(t);
        }
    }
    let [clone, gate, fire] = best;

    println!(
        "2. Hooks off: enabled(false), {} gates per loop (best of 2 interleaved loops)",
        OFF_ITERS
    );
    rule();
    println!(
        "   {:<56} {:>12}",
        "ToolCall clone + drop alone (baseline)",
        human(clone)
    );
    println!(
        "   {:<56} {:>12}   target < 1 µs   {}",
        "gate_tool(call.clone())  [includes building the call]",
        human(gate),
        verdict_word(gate < Duration::from_micros(1))
    );
    println!(
        "   {:<56} {:>12}",
        "fire_blocking(&payload)  [the off-path alone]",
        human(fire)
    );
    println!(
        "   {:<56} {:>12}   ({:.2}× the clone baseline)",
        "gate_tool minus the clone baseline",
        human(gate.saturating_sub(clone)),
        ratio(gate, clone)
    );
    println!(
        "   no hook ran: {}",
        if quiet { "yes" } else { "NO (runs recorded!)" }
    );
    rule();
    println!();
}

// ---------------------------------------------------------------------------------
// 3. 100 non-matching hooks
// ---------------------------------------------------------------------------------

/// A matcher for hook `i` that does not match [`SUBJECT`]: mostly linear-engine
/// alternations, every tenth a lookaround pattern (backtracking engine).
fn non_matching_matcher(i: usize) -> String {
    const LOOKAROUND: [&str; 5] = [
        "^(?!git)",
        "status(?= --force)",
        "(?<!git )status",
        "^git (?!status)",
        r"\bpush\b(?!.*--dry-run)",
    ];
    if i % 10 == 9 {
        return LOOKAROUND
            .get((i / 10) % LOOKAROUND.len())
            .copied()
            .unwrap_or("^(?!git)")
            .to_string();
    }
    match i % 4 {
        0 => format!(r"^(rm|rmdir|unlink|shred) -rf /tmp/victim-{i}\b"),
        1 => format!(r"(curl|wget|nc)\s+\S*evil-{i}\.example"),
        2 => format!(r"^(npm|yarn|pnpm|cargo) publish --tag t{i}$"),
        _ => format!(r"git (push|reset|clean) --(force|hard)-{i}"),
    }
}

fn marker_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

fn non_matching() {
    let markers = tempfile::tempdir().expect("marker dir");
    let hooks: Vec<Value> = (0..100)
        .map(|i| {
            let marker = markers.path().join(format!("hook-{i}"));
            json!({
                "command": format!("touch '{}'; echo '{{\"permission\":\"allow\"}}'", marker.display()),
                "matcher": non_matching_matcher(i),
            })
        })
        .collect();
    let lookarounds = (0..100).filter(|i| i % 10 == 9).count();
    // Unsandboxed: the positive control's markers live outside the workspace.
    let fx = Fixture::with_sandbox(&entries(hooks), true, false);
    let empty = Fixture::with_sandbox(&json!({}), true, false);
    let listing = fx.engine.list();
    let active = listing.hooks.iter().filter(|h| h.active).count();

    let session = fx.session();
    let empty_session = empty.session();
    let call = shell_call(SUBJECT);
    // Warm-up: parses and compiles the 100 matchers once (cached by file identity).
    let _ = session.gate_tool(call.clone());
    let _ = empty_session.gate_tool(call.clone());

    let mut with_runs = 0usize;
    let mut hundred = Vec::with_capacity(NOMATCH_BLOCKS);
    let mut baseline = Vec::with_capacity(NOMATCH_BLOCKS);
    for _ in 0..NOMATCH_BLOCKS {
        let start = Instant::now();
        for _ in 0..NOMATCH_BLOCK_LEN {
            let v = session.gate_tool(call.clone());
            with_runs += usize::from(!v.runs.is_empty());
            drop(black_box(v));
        }
        hundred.push(start.elapsed() / NOMATCH_BLOCK_LEN);
        let start = Instant::now();
        for _ in 0..NOMATCH_BLOCK_LEN {
            let v = empty_session.gate_tool(call.clone());
            with_runs += usize::from(!v.runs.is_empty());
            drop(black_box(v));
        }
        baseline.push(start.elapsed() / NOMATCH_BLOCK_LEN);
    }
    let hundred = median(&sorted(hundred));
    let baseline = median(&sorted(baseline));
    let leaked_markers = marker_count(markers.path());

    // Positive control: a subject the `^(?!git)` hooks do match must spawn them and
    // leave their markers, so "no marker" above really means "not spawned".
    let control = session.gate_tool(shell_call("ls -la"));
    let control_markers = marker_count(markers.path()).saturating_sub(leaked_markers);
    let control_ok = !control.runs.is_empty() && control_markers == control.runs.len();

    let gates = NOMATCH_BLOCKS * usize::try_from(NOMATCH_BLOCK_LEN).unwrap_or(0);
    println!(
        "3. 100 non-matching hooks ({} linear-engine alternations, {} lookaround), enabled; {} gates each, median of {} interleaved blocks",
        100 - lookarounds,
        lookarounds,
        gates,
        NOMATCH_BLOCKS
    );
    rule();
    println!(
        "   {:<56} {:>12}",
        "empty hooks.json (baseline: stat + plumbing)",
        human(baseline)
    );
    println!(
        "   {:<56} {:>12}   target < 20 µs   {}",
        "100 non-matching beforeShellExecution hooks",
        human(hundred),
        verdict_word(hundred < Duration::from_micros(20))
    );
    println!(
        "   {:<56} {:>12}   ({:.2}× the baseline)",
        "per matcher ((100 hooks - baseline) / 100)",
        human(hundred.saturating_sub(baseline) / 100),
        ratio(hundred, baseline)
    );
    println!(
        "   hooks parsed and active: {active}/100;  gates with run records: {with_runs};  marker files: {leaked_markers}  =>  {}",
        if active == 100 && with_runs == 0 && leaked_markers == 0 {
            "no process spawned (PROVEN)"
        } else {
            "PROOF FAILED"
        }
    );
    println!(
        "   positive control (`ls -la` matches the `^(?!git)` hooks): {} runs, {} new markers  =>  {}",
        control.runs.len(),
        control_markers,
        if control_ok {
            "marker probe works"
        } else {
            "PROBE BROKEN"
        }
    );
    rule();
    println!();
}

// ---------------------------------------------------------------------------------
// 4. Fan-out
// ---------------------------------------------------------------------------------

fn fan_out() {
    let sleeper = || json!({"command": r#"sleep 0.1; echo '{"permission":"allow"}'"#});
    let eight = Fixture::new(&entries((0..FANOUT_HOOKS).map(|_| sleeper())), true);
    let one = Fixture::new(&entries([sleeper()]), true);
    let (eight_s, one_s) = (eight.session(), one.session());
    let call = shell_call(SUBJECT);

    let mut t8 = Vec::with_capacity(FANOUT_RUNS);
    let mut t1 = Vec::with_capacity(FANOUT_RUNS);
    let mut bad = 0usize;
    // One warm-up round (config parse), then ABAB...
    for round in 0..=FANOUT_RUNS {
        let c = call.clone();
        let start = Instant::now();
        let v = eight_s.gate_tool(c);
        let e8 = start.elapsed();
        bad += usize::from(!all_allowed(&v, FANOUT_HOOKS));
        let c = call.clone();
        let start = Instant::now();
        let v = one_s.gate_tool(c);
        let e1 = start.elapsed();
        bad += usize::from(!all_allowed(&v, 1));
        if round > 0 {
            t8.push(e8);
            t1.push(e1);
        }
    }
    let (t8, t1) = (sorted(t8), sorted(t1));
    let (m8, m1) = (median(&t8), median(&t1));

    println!(
        "4. Fan-out: {FANOUT_HOOKS} matching hooks, each `sleep 0.1` then allow; wall time of one gate, {FANOUT_RUNS} interleaved runs"
    );
    rule();
    println!(
        "   {:<40} {:>11} {:>11} {:>11}",
        "variant", "median", "min", "max"
    );
    for (name, t) in [
        ("1 sleeping hook (baseline)", &t1),
        ("8 sleeping hooks", &t8),
    ] {
        println!(
            "   {:<40} {:>11} {:>11} {:>11}",
            name,
            human(median(t)),
            human(t.first().copied().unwrap_or_default()),
            human(t.last().copied().unwrap_or_default()),
        );
    }
    rule();
    println!(
        "   8 hooks: {}   target < 150 ms   {}   ({:.2}× the 1-hook gate; serial would be ~{:.1}×)",
        human(m8),
        verdict_word(m8 < Duration::from_millis(150)),
        ratio(m8, m1),
        FANOUT_HOOKS as f64
    );
    if bad > 0 {
        println!("   WARNING: {bad} gates did not return a clean allow from every hook");
    }
    println!();
}
