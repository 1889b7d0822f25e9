//! Config freshness in a long-lived engine: real files edited between gates in one
//! process, and the discovery seam (`Engine::config_file_accesses`) proving that
//! gates with nothing changed touch no config file once the watches are set up (at
//! the third gate: a one-shot CLI gate loads the configs twice and sets up nothing).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use copse_hooks::{Engine, EngineConfig, Session, SessionIdentity, ToolCall, Verdict};
use serde_json::json;

struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("ws")).unwrap();
        Fx { _dir: dir, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn ws(&self) -> PathBuf {
        self.path("ws")
    }

    /// One trusted root, every config location inside the temp dir.
    fn engine(&self) -> Engine {
        let mut config = EngineConfig::from_process(vec![self.ws()])
            .home(self.path("home"))
            .enabled(true)
            .trust(self.ws());
        config.copse_dir = self.path("home/.copse");
        config.gemini_system_settings = self.path("etc/gemini-cli/settings.json");
        config.codex_system_dir = self.path("etc/codex");
        config.codex_home = Some(self.path("home/.codex"));
        config.sandbox_writable = vec![self.root.clone()];
        Engine::new(config)
    }
}

/// A Cursor config whose one shell gate hook prints `tag` (and allows).
fn cursor_config(tag: &str) -> String {
    json!({"version": 1, "hooks": {"beforeShellExecution": [
        {"command": format!("cat >/dev/null; echo {tag} >&2")}
    ]}})
    .to_string()
}

/// Writes `text` to `path` in place (same inode), creating its directory.
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes `text` beside `path` and renames it over `path` (a new inode), as editors do.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn gate(session: &Session) -> Verdict {
    session.gate_tool(ToolCall::new(
        "run_shell",
        json!({"command": "ls"}).as_object().unwrap().clone(),
    ))
}

/// The tags of the hooks that ran (see [`cursor_config`]), in order.
fn tags(v: &Verdict) -> Vec<String> {
    v.runs
        .iter()
        .map(|r| {
            r.command
                .trim_start_matches("cat >/dev/null; echo ")
                .trim_end_matches(" >&2")
                .to_owned()
        })
        .collect()
}

/// The gates it takes an engine to set up its freshness check (the third load).
const SETUP_GATES: usize = 3;

/// [`SETUP_GATES`] gates, each running the hooks tagged `expect`.
fn settle(session: &Session, expect: &[&str]) {
    for _ in 0..SETUP_GATES {
        assert_eq!(tags(&gate(session)), expect);
    }
}

#[test]
fn edits_between_gates_are_seen_by_the_next_gate() {
    let fx = Fx::new();
    let user = fx.path("home/.cursor/hooks.json");
    let project = fx.ws().join(".cursor/hooks.json");
    write(&user, &cursor_config("user-1"));
    let engine = fx.engine();
    let session = engine.session(SessionIdentity::new("c"));
    settle(&session, &["user-1"]);

    // Written in place, same length: only the identity's times differ.
    write(&user, &cursor_config("user-2"));
    assert_eq!(tags(&gate(&session)), ["user-2"], "written in place");
    assert_eq!(tags(&gate(&session)), ["user-2"]);

    replace(&user, &cursor_config("user-3"));
    assert_eq!(tags(&gate(&session)), ["user-3"], "renamed over");

    std::fs::remove_file(&user).unwrap();
    assert!(tags(&gate(&session)).is_empty(), "deleted");
    assert!(tags(&gate(&session)).is_empty());

    // The project's `.cursor` did not exist: its creation, then the file's.
    std::fs::create_dir(fx.ws().join(".cursor")).unwrap();
    assert!(tags(&gate(&session)).is_empty());
    write(&project, &cursor_config("project-1"));
    assert_eq!(tags(&gate(&session)), ["project-1"], "created");

    write(&user, &cursor_config("user-4"));
    assert_eq!(
        tags(&gate(&session)),
        ["user-4", "project-1"],
        "recreated, user configs first"
    );

    // Made writable by others: refused, none of its hooks run; fixed: runs again.
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o666)).unwrap();
    let refused = gate(&session);
    assert_eq!(
        tags(&refused),
        ["user-4", "copse-hooks: refused config"],
        "chmod o+w refuses it, and the refusal blocks the gate"
    );
    assert_eq!(refused.decision, Some(copse_hooks::Decision::Deny));
    assert!(
        refused
            .agent_message
            .as_deref()
            .is_some_and(|m| m.contains("chmod go-w")),
        "{:?}",
        refused.agent_message
    );
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(tags(&gate(&session)), ["user-4", "project-1"], "chmod go-w");

    // The project's `.cursor` renamed away and another put in its place.
    std::fs::rename(fx.ws().join(".cursor"), fx.ws().join("cursor-old")).unwrap();
    assert_eq!(tags(&gate(&session)), ["user-4"], ".cursor renamed away");
    write(
        &fx.path("cursor-new/hooks.json"),
        &cursor_config("project-2"),
    );
    std::fs::rename(fx.path("cursor-new"), fx.ws().join(".cursor")).unwrap();
    assert_eq!(
        tags(&gate(&session)),
        ["user-4", "project-2"],
        "another .cursor renamed in"
    );
}

#[test]
fn gates_with_nothing_changed_touch_no_config_file_once_watched() {
    let fx = Fx::new();
    let user = fx.path("home/.cursor/hooks.json");
    write(&user, &cursor_config("user-1"));
    write(
        &fx.ws().join(".cursor/hooks.json"),
        &cursor_config("project-1"),
    );
    let engine = fx.engine();
    let session = engine.session(SessionIdentity::new("c"));
    gate(&session);
    let first = engine.config_file_accesses();
    assert!(first > 0, "the first gate examines every location");
    gate(&session);
    assert!(
        engine.config_file_accesses() > first,
        "the second gate still examines every location"
    );
    gate(&session);
    let settled = engine.config_file_accesses();
    for _ in 0..50 {
        assert_eq!(tags(&gate(&session)), ["user-1", "project-1"]);
    }
    assert_eq!(
        engine.config_file_accesses(),
        settled,
        "gates with nothing changed touched config files"
    );

    // A change costs one round of examination, then nothing again.
    write(&user, &cursor_config("user-2"));
    assert_eq!(tags(&gate(&session)), ["user-2", "project-1"]);
    let after_edit = engine.config_file_accesses();
    assert!(after_edit > settled, "the edit was examined");
    for _ in 0..20 {
        gate(&session);
    }
    assert_eq!(engine.config_file_accesses(), after_edit);
}

#[test]
fn a_symlinked_config_is_examined_at_every_gate() {
    let fx = Fx::new();
    let user = fx.path("home/.cursor/hooks.json");
    let (a, b) = (fx.path("dotfiles/a.json"), fx.path("dotfiles/b.json"));
    write(&a, &cursor_config("a-1"));
    write(&b, &cursor_config("b-1"));
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&a, &user).unwrap();
    let engine = fx.engine();
    let session = engine.session(SessionIdentity::new("c"));
    settle(&session, &["a-1"]);

    // The target changes in a directory nothing watches.
    write(&a, &cursor_config("a-2"));
    assert_eq!(tags(&gate(&session)), ["a-2"], "target written in place");
    replace(&a, &cursor_config("a-3"));
    assert_eq!(tags(&gate(&session)), ["a-3"], "target renamed over");

    // The link pointed elsewhere.
    let tmp = fx.path("home/.cursor/link~");
    std::os::unix::fs::symlink(&b, &tmp).unwrap();
    std::fs::rename(&tmp, &user).unwrap();
    assert_eq!(tags(&gate(&session)), ["b-1"], "link retargeted");

    // A linked directory above the config: its target's content changes.
    std::fs::remove_file(&user).unwrap();
    let real = fx.path("real-cursor");
    write(&real.join("hooks.json"), &cursor_config("dir-1"));
    std::fs::remove_dir(user.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, user.parent().unwrap()).unwrap();
    assert_eq!(tags(&gate(&session)), ["dir-1"], "directory linked");
    assert_eq!(tags(&gate(&session)), ["dir-1"]);
    write(&real.join("hooks.json"), &cursor_config("dir-2"));
    assert_eq!(
        tags(&gate(&session)),
        ["dir-2"],
        "behind a linked directory"
    );
}

#[test]
fn a_link_above_the_home_pointed_elsewhere_is_seen() {
    let fx = Fx::new();
    write(
        &fx.path("users-a/home/.cursor/hooks.json"),
        &cursor_config("a"),
    );
    write(
        &fx.path("users-b/home/.cursor/hooks.json"),
        &cursor_config("b"),
    );
    // `home` itself is a real directory; a link two levels up leads to it.
    std::fs::remove_dir(fx.path("home")).unwrap();
    std::os::unix::fs::symlink(fx.path("users-a"), fx.path("users")).unwrap();
    let mut config = fx.engine().config().clone();
    config.home = fx.path("users/home");
    let engine = Engine::new(config);
    let session = engine.session(SessionIdentity::new("c"));
    settle(&session, &["a"]);
    // Nothing under the link changed: only the link, above every watched directory.
    let tmp = fx.path("users~");
    std::os::unix::fs::symlink(fx.path("users-b"), &tmp).unwrap();
    std::fs::rename(&tmp, fx.path("users")).unwrap();
    assert_eq!(tags(&gate(&session)), ["b"], "the link pointed elsewhere");
}

#[test]
fn a_config_with_another_hard_link_is_seen_through_that_link() {
    let fx = Fx::new();
    let user = fx.path("home/.cursor/hooks.json");
    let other = fx.path("elsewhere/hooks.json");
    write(&user, &cursor_config("v1"));
    let engine = fx.engine();
    let session = engine.session(SessionIdentity::new("c"));
    settle(&session, &["v1"]);
    // Linked after the watches were set up, then written through the other link.
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::hard_link(&user, &other).unwrap();
    assert_eq!(tags(&gate(&session)), ["v1"]);
    write(&other, &cursor_config("v2"));
    assert_eq!(
        tags(&gate(&session)),
        ["v2"],
        "written through another link"
    );
    write(&other, &cursor_config("v3"));
    assert_eq!(tags(&gate(&session)), ["v3"], "and again");
}

#[test]
fn unrelated_changes_beside_the_configs_cause_no_examination() {
    let fx = Fx::new();
    write(
        &fx.path("home/.cursor/hooks.json"),
        &cursor_config("user-1"),
    );
    write(
        &fx.ws().join(".cursor/hooks.json"),
        &cursor_config("project-1"),
    );
    let engine = fx.engine();
    let session = engine.session(SessionIdentity::new("c"));
    settle(&session, &["user-1", "project-1"]);
    let settled = engine.config_file_accesses();

    // A busy workspace root and home: files and directories beside the config
    // directories, and other files inside them.
    let ws = fx.ws();
    write(&ws.join("notes.txt"), "draft");
    write(&ws.join("notes.txt"), "draft 2");
    replace(&ws.join("notes.txt"), "draft 3");
    std::fs::create_dir(ws.join("src")).unwrap();
    write(&ws.join("src/lib.rs"), "fn main() {}");
    std::fs::rename(ws.join("src"), ws.join("source")).unwrap();
    std::fs::remove_file(ws.join("notes.txt")).unwrap();
    write(&ws.join(".cursor/rules.md"), "be nice");
    replace(&ws.join(".cursor/mcp.json"), "{}");
    write(&fx.path("home/.bash_history"), "ls\n");
    write(&fx.path("home/.cursor/argv.json"), "{}");
    std::fs::set_permissions(ws.join("source"), std::fs::Permissions::from_mode(0o700)).unwrap();
    for _ in 0..10 {
        assert_eq!(tags(&gate(&session)), ["user-1", "project-1"]);
    }
    assert_eq!(
        engine.config_file_accesses(),
        settled,
        "unrelated changes made the engine examine config files"
    );

    // The same kind of change to a config's own name does.
    write(&ws.join(".cursor/hooks.json"), &cursor_config("project-2"));
    assert_eq!(tags(&gate(&session)), ["user-1", "project-2"]);
    assert!(engine.config_file_accesses() > settled);
}

#[test]
fn engines_of_one_process_share_the_watches_and_each_sees_every_edit() {
    let fx = Fx::new();
    let user = fx.path("home/.cursor/hooks.json");
    write(&user, &cursor_config("v1"));
    let (a, b) = (fx.engine(), fx.engine());
    let (sa, sb) = (
        a.session(SessionIdentity::new("a")),
        b.session(SessionIdentity::new("b")),
    );
    settle(&sa, &["v1"]);
    settle(&sb, &["v1"]);
    // `a`'s gate reads the event off the one inotify descriptor; `b` still sees it.
    write(&user, &cursor_config("v2"));
    assert_eq!(tags(&gate(&sa)), ["v2"]);
    assert_eq!(tags(&gate(&sb)), ["v2"], "the other engine saw the edit");
    // `a` dropped: the watches `b` shares with it stay.
    drop(sa);
    drop(a);
    let settled = b.config_file_accesses();
    gate(&sb);
    assert_eq!(b.config_file_accesses(), settled);
    write(&user, &cursor_config("v3"));
    assert_eq!(tags(&gate(&sb)), ["v3"], "seen after the other engine went");
}
