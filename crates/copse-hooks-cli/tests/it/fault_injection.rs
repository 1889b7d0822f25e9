//! Seeded fault injection: a replay with hooks of every fault kind (clean, failing,
//! garbage, timeout, oversize, forking, `setsid` daemon, TERM-ignoring) is killed at random
//! points by a random one of KILL, TERM, INT, HUP. After every kill: no process a hook
//! started survives, and the audit store still opens and passes `PRAGMA integrity_check`;
//! at the end a replay that is not killed has every one of its runs recorded.
//!
//! The seed is printed; `COPSE_FAULT_SEED=<n>` replays a failing sequence.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::Env;

/// xorshift64*: a few random numbers, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The host pids of the live processes the hooks recorded in `dir` (one file per process;
/// see `crate::hook_pid`).
fn pids(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| crate::hook_pid::host_pid(&std::fs::read_to_string(e.path()).ok()?))
                .collect()
        })
        .unwrap_or_default()
}

fn hooks(env: &Env, pid_dir: &Path) -> Value {
    let record = format!(
        "f=$(mktemp {d}/pid.XXXXXX); echo {id} > $f",
        id = crate::hook_pid::SELF_ID_SH,
        d = pid_dir.display()
    );
    let bodies = [
        r#"cat >/dev/null; echo '{"permission":"allow"}'"#.to_owned(),
        "cat >/dev/null; echo oops >&2; exit 1".to_owned(),
        "cat >/dev/null; echo 'not json'".to_owned(),
        "cat >/dev/null; head -c 2000000 /dev/zero | tr '\\0' x".to_owned(),
        "cat >/dev/null; sleep 5".to_owned(),
        format!("cat >/dev/null; (sh -c '{record}; exec sleep 1000') & sleep 0.05"),
        format!(
            "cat >/dev/null; setsid sh -c 'trap \"\" TERM; {record}; exec sleep 1000' \
             </dev/null >/dev/null 2>&1 & sleep 0.05"
        ),
        format!("cat >/dev/null; trap '' TERM INT HUP; {record}; sleep 0.3"),
    ];
    let entries: Vec<Value> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let script = env.script(format!("home/.cursor/hooks/fault{i}.sh"), body);
            json!({"command": script.display().to_string(), "timeout": 0.5})
        })
        .collect();
    json!({"version": 1, "hooks": {"beforeShellExecution": entries}})
}

fn replay_file(env: &Env, events: usize) -> std::path::PathBuf {
    let mut text = String::from("{\"event\":\"session\",\"conversation_id\":\"conv-fault\"}\n");
    for i in 0..events {
        text.push_str(
            &json!({"event": "toolGate", "tool": "run_shell", "input": {"command": format!("echo {i}")}})
                .to_string(),
        );
        text.push('\n');
    }
    env.write(format!("replay-{events}.jsonl"), &text)
}

fn replay_command(env: &Env, file: &Path) -> Command {
    let mut cmd = env.cmd().cmd;
    cmd.args(["--enable", "--json", "replay"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn integrity(env: &Env) {
    let db = env.copse_dir().join("spine.db");
    if !db.exists() {
        return;
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let result: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(result, "ok", "the audit store is damaged");
}

fn recorded_runs(env: &Env) -> usize {
    let v = env
        .cmd()
        .args(["--json", "log", "--limit", "100000"])
        .run()
        .success()
        .json();
    v["runs"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_replay_killed_at_random_points_leaves_no_survivor_and_a_sound_store() {
    let seed = std::env::var("COPSE_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0005_eedc_0b5e_u64);
    println!("fault injection seed: {seed}");
    let mut rng = Rng(seed | 1);
    let env = Env::new();
    let pid_dir = env.root().join("pids");
    std::fs::create_dir_all(&pid_dir).unwrap();
    env.user_cursor(&hooks(&env, &pid_dir).to_string());
    let file = replay_file(&env, 40);
    let signals = [libc::SIGKILL, libc::SIGTERM, libc::SIGINT, libc::SIGHUP];
    for round in 0..6 {
        let mut host = replay_command(&env, &file).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100 + rng.below(900)));
        let signal = signals[usize::try_from(rng.below(4)).unwrap()];
        let host_pid = i32::try_from(host.id()).unwrap();
        // SAFETY: a plain kill of the child this test started.
        unsafe { libc::kill(host_pid, signal) };
        host.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids(&pid_dir).into_iter().any(alive) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let survivors: Vec<i32> = pids(&pid_dir).into_iter().filter(|&p| alive(p)).collect();
        for &p in &survivors {
            // SAFETY: clean up what this test's hooks left.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(
            survivors.is_empty(),
            "seed {seed}, round {round}, signal {signal}: survivors {survivors:?}"
        );
        integrity(&env);
    }
    assert!(
        std::fs::read_dir(&pid_dir).unwrap().next().is_some(),
        "no hook ever started a process"
    );
    // The store still takes every run of a replay that is not killed.
    let before = recorded_runs(&env);
    let short = replay_file(&env, 2);
    let status = replay_command(&env, &short).status().unwrap();
    assert!(status.success());
    integrity(&env);
    assert_eq!(recorded_runs(&env), before + 2 * 8, "seed {seed}");
}
