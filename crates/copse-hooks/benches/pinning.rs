//! Script pinning at gate time: `cargo bench -p copse-hooks --bench pinning`.
//!
//! One trusted project hook that runs a workspace script (`sh .copse/hooks/allow.sh`),
//! gated through `Session::gate_tool`, with the root trusted by pins (config and script
//! hashed at every gate) against the same root trusted unpinned (a bare path: nothing
//! hashed). Interleaved, medians compared in the same run. Also the cost of the check
//! alone: `Engine::hook_scripts` for that hook (tokenise, read, hash).
//!
//! A miss is reported, never asserted.

// reason: a benchmark binary; a broken setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use copse_hooks::TrustedWorkspace;
use copse_hooks::{Engine, EngineConfig, SessionIdentity, ToolCall};
use serde_json::{Map, json};

const ITERS: usize = 200;

fn engine(ws: &std::path::Path, home: &std::path::Path, pinned: bool) -> Engine {
    let mut config = EngineConfig::from_process(vec![ws.to_path_buf()])
        .home(home)
        .enabled(true);
    config.copse_dir = home.join("copse");
    config.sandbox = false;
    let probe = Engine::new(config.clone().trust(ws));
    let snapshot = probe.trust_snapshot(&std::fs::canonicalize(ws).unwrap());
    assert_eq!(snapshot.scripts.len(), 1, "the script is found");
    config.trusted = vec![if pinned {
        TrustedWorkspace::Pinned {
            path: ws.to_path_buf(),
            configs: snapshot.configs,
            scripts: Some(snapshot.scripts),
        }
    } else {
        TrustedWorkspace::Path(ws.to_path_buf())
    }];
    Engine::new(config)
}

fn call() -> ToolCall {
    let mut input = Map::new();
    input.insert("command".into(), json!("git status"));
    ToolCall::new("run_shell", input)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = ws.path().join(".copse/hooks/allow.sh");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    // A realistic script size (~8 KiB) so hashing has something to do.
    let mut body = String::from("cat >/dev/null\n");
    while body.len() < 8 * 1024 {
        body.push_str("# a comment line to give the script a realistic size\n");
    }
    std::fs::write(&script, body).unwrap();
    std::fs::write(
        ws.path().join(".copse/hooks.json"),
        json!({"version": 1, "hooks": {"toolGate": [{"command": "sh .copse/hooks/allow.sh"}]}})
            .to_string(),
    )
    .unwrap();
    let pinned = engine(ws.path(), home.path(), true);
    let unpinned = engine(ws.path(), home.path(), false);
    let (sp, su) = (
        pinned.session(SessionIdentity::new("p")),
        unpinned.session(SessionIdentity::new("u")),
    );
    for _ in 0..20 {
        assert_eq!(sp.gate_tool(call()).runs.len(), 1);
        assert_eq!(su.gate_tool(call()).runs.len(), 1);
    }
    let (mut p, mut u) = (Vec::new(), Vec::new());
    for _ in 0..ITERS {
        let t = Instant::now();
        sp.gate_tool(call());
        p.push(t.elapsed());
        let t = Instant::now();
        su.gate_tool(call());
        u.push(t.elapsed());
    }
    let (mp, mu) = (median(p), median(u));
    let ratio = mp.as_secs_f64() / mu.as_secs_f64();
    println!("copse-hooks script pinning benchmark (one run, interleaved, medians)");
    println!("  gate, root trusted unpinned (baseline): {mu:?}");
    println!(
        "  gate, config and script pinned:         {mp:?}  ratio {ratio:.3}x  target <= 1.05x  {}",
        if ratio <= 1.05 { "PASS" } else { "MISS" }
    );
    let config = pinned
        .list()
        .hooks
        .into_iter()
        .find(|h| h.scope == copse_hooks::Scope::Project)
        .unwrap();
    assert_eq!(config.scripts.len(), 1);
    // The check alone, through the public listing path's building block.
    let spec_engine = &pinned;
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..2_000 {
        n += spec_engine.pinned_scripts().len();
    }
    let accessor = t.elapsed() / 2_000;
    let t = Instant::now();
    for _ in 0..200 {
        n += spec_engine.list().hooks[0].scripts.len();
    }
    let listing = t.elapsed() / 200;
    println!("  pinned_scripts() accessor:              {accessor:?} ({n} scripts seen)");
    println!("  list() with one pinned script:          {listing:?}");
    println!(
        "  pin check per gate (difference):        {:?}",
        mp.saturating_sub(mu)
    );
}
