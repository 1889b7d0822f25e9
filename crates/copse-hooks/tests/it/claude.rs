//! The Claude Code dialect end to end: `settings.json` files in a temp home and
//! workspace, real hook processes, and the engine's verdicts; plus the adapter's
//! marshalling and reading of every wired event through the `Adapter` trait.

use std::path::{Path, PathBuf};
use std::time::Duration;

use copse_hooks::dialect::claude::{self, Claude};
use copse_hooks::dialect::{
    Adapter, Context, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, Engine, EventPayload, FailureKind, Fired, ModelIdentity,
    Outcome, RunOutcome, Scope, Session, SessionIdentity, ToolCall, Verdict,
};
use copse_hooks::{Compaction, ToolResult};
use copse_hooks::{FailurePolicy, Halt, QueueRequest};
use serde_json::{Value, json};

use crate::fx::{Fx, answer, commands, group, lit, obj, stdin_of, verdict};

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

/// The tool use id every test gate carries.
const TOOL_USE_ID: &str = "toolu_test_1";

fn gate(session: &Session, tool: &str, input: Value) -> Verdict {
    session.gate_tool(ToolCall::new(tool, obj(input)).with_tool_use_id(TOOL_USE_ID))
}

fn bash(session: &Session, command: &str) -> Verdict {
    gate(session, "run_shell", json!({ "command": command }))
}

/// A command handler.
fn cmd(command: &str) -> Value {
    json!({"type": "command", "command": command})
}

fn pre_tool(decision: &str, reason: &str) -> String {
    answer(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }}))
}

/// The verdict of one user-level PreToolUse hook on `ls`.
fn verdict_of(command: &str) -> Verdict {
    let fx = Fx::new();
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[command])]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.runs.len(), 1, "the hook ran once");
    v
}

// ---------------------------------------------------------------------------------
// Discovery and trust
// ---------------------------------------------------------------------------------

#[test]
fn user_settings_hook_runs_and_receives_exact_bash_stdin() {
    let fx = Fx::new();
    let out = fx.at("stdin.json");
    let source =
        fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&format!("cat > {out}")])]}));
    let session = fx.session();

    let v = bash(&session, "git status");
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(v.runs.len(), 1);
    let run = &v.runs[0];
    assert_eq!(run.dialect, Dialect::Claude);
    assert_eq!(run.event, "PreToolUse");
    assert_eq!(run.canonical, CanonicalEvent::ToolGate);
    assert_eq!(run.scope, Scope::User);
    assert_eq!(run.source, source);
    assert_eq!(run.result, RunOutcome::None);

    let expected = format!(
        r#"{{"session_id":"conv-1","transcript_path":"","cwd":{},"hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{{"command":"git status"}},"tool_use_id":"toolu_test_1"}}"#,
        lit(fx.ws().display().to_string())
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
    assert_eq!(String::from_utf8_lossy(&run.stdin), expected);
}

#[test]
fn read_stdin_has_claude_shape_and_an_absolute_path() {
    let fx = Fx::new();
    let out = fx.at("stdin.json");
    fx.claude_user(json!({"PreToolUse": [group(Some("Read"), &[&format!("cat > {out}")])]}));
    let v = gate(&fx.session(), "read_file", json!({"path": "src/lib.rs"}));
    assert_eq!(v.runs.len(), 1);
    let expected = format!(
        r#"{{"session_id":"conv-1","transcript_path":"","cwd":{},"hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Read","tool_input":{{"file_path":{}}},"tool_use_id":"toolu_test_1"}}"#,
        lit(fx.ws().display().to_string()),
        lit(fx.ws().join("src/lib.rs").display().to_string()),
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);

    // An absolute path is passed unchanged.
    let v = gate(&fx.session(), "read_file", json!({"path": "/etc/hosts"}));
    assert_eq!(
        stdin_of(&v, 0)["tool_input"],
        json!({"file_path": "/etc/hosts"})
    );
}

#[test]
fn mcp_stdin_keeps_the_tool_name_and_input() {
    let fx = Fx::new();
    let out = fx.at("stdin.json");
    fx.claude_user(
        json!({"PreToolUse": [group(Some("mcp__memory__.*"), &[&format!("cat > {out}")])]}),
    );
    let v = gate(
        &fx.session(),
        "mcp__memory__store",
        json!({"key": "a", "value": 1, "nested": {"x": [1, 2]}}),
    );
    assert_eq!(v.runs.len(), 1);
    let expected = format!(
        r#"{{"session_id":"conv-1","transcript_path":"","cwd":{},"hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"mcp__memory__store","tool_input":{{"key":"a","value":1,"nested":{{"x":[1,2]}}}},"tool_use_id":"toolu_test_1"}}"#,
        lit(fx.ws().display().to_string())
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
}

#[test]
fn project_settings_and_local_settings_run_only_when_trusted() {
    let fx = Fx::new();
    let (m_user, m_project, m_local) = (
        fx.at("user.marker"),
        fx.at("project.marker"),
        fx.at("local.marker"),
    );
    let user = fx.claude_user(json!({"PreToolUse": [group(None, &[&format!("touch {m_user}")])]}));
    let project =
        fx.claude_project(json!({"PreToolUse": [group(None, &[&format!("touch {m_project}")])]}));
    let local =
        fx.claude_local(json!({"PreToolUse": [group(None, &[&format!("touch {m_local}")])]}));

    // Untrusted: only the user hook runs; the project files are listed but inactive.
    let engine = fx.engine();
    let v = bash(&engine.session(SessionIdentity::new("c")), "ls");
    assert_eq!(v.runs.len(), 1);
    assert_eq!(v.runs[0].source, user);
    assert!(Path::new(&m_user).exists());
    assert!(
        !Path::new(&m_project).exists(),
        "an untrusted project hook must never spawn"
    );
    assert!(
        !Path::new(&m_local).exists(),
        "an untrusted local hook must never spawn"
    );
    let listing = engine.list();
    let claude: Vec<_> = listing
        .hooks
        .iter()
        .filter(|h| h.dialect == Dialect::Claude)
        .collect();
    assert_eq!(claude.len(), 3);
    assert_eq!(
        claude
            .iter()
            .map(|h| (&h.source, h.scope, h.trusted, h.active))
            .collect::<Vec<_>>(),
        vec![
            (&user, Scope::User, true, true),
            (&project, Scope::Project, false, false),
            (&local, Scope::Project, false, false),
        ]
    );

    // Trusted: all three, in configured order (user, project, local).
    std::fs::remove_file(&m_user).unwrap();
    let v = bash(&fx.trusted_session(), "ls");
    assert_eq!(
        v.runs.iter().map(|r| r.source.clone()).collect::<Vec<_>>(),
        vec![user, project, local]
    );
    assert_eq!(v.runs[1].scope, Scope::Project);
    for m in [&m_user, &m_project, &m_local] {
        assert!(Path::new(m).exists(), "{m} should exist");
    }
}

#[test]
fn project_hooks_run_in_the_root_and_see_claude_project_dir() {
    let fx = Fx::new();
    fx.claude_project(
        json!({"PreToolUse": [group(None, &[r#"echo "$CLAUDE_PROJECT_DIR|$(pwd)" >&2; exit 2"#])]}),
    );
    let v = bash(&fx.trusted_session(), "ls");
    let ws = fx.ws().display().to_string();
    assert_eq!(
        v.agent_message.as_deref(),
        Some(format!("{ws}|{ws}").as_str())
    );
}

#[test]
fn user_hooks_see_the_first_workspace_root_as_claude_project_dir() {
    let fx = Fx::new();
    fx.claude_user(json!({"PreToolUse": [group(None, &[r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}' "$CLAUDE_PROJECT_DIR""#])]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message, Some(fx.ws().display().to_string()));
}

#[test]
fn settings_without_hooks_are_fine_and_invalid_json_is_reported_with_position() {
    let fx = Fx::new();
    fx.write(
        "home/.claude/settings.json",
        r#"{"model": "opus", "env": {"A": "1"}}"#,
    );
    let local = fx.write(
        "ws/.claude/settings.local.json",
        "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n",
    );
    let engine = fx.trusted_engine();
    let listing = engine.list();
    assert!(listing.hooks.is_empty());
    assert_eq!(listing.warnings.len(), 1, "{:?}", listing.warnings);
    let w = &listing.warnings[0];
    assert_eq!(w.source, local);
    assert_eq!(w.scope, Scope::Project);
    assert!(
        w.message
            .starts_with(".claude/settings.local.json is not valid JSON (line 3, column"),
        "{}",
        w.message
    );
    assert!(w.message.ends_with("— file ignored"), "{}", w.message);
    assert!(
        bash(&engine.session(SessionIdentity::new("c")), "ls")
            .runs
            .is_empty()
    );
}

// ---------------------------------------------------------------------------------
// Matchers
// ---------------------------------------------------------------------------------

#[test]
fn matchers_all_names_regex_and_invalid() {
    let fx = Fx::new();
    fx.claude_user(json!({"PreToolUse": [
        group(None, &[": absent"]),
        group(Some("*"), &[": star"]),
        group(Some(""), &[": empty"]),
        group(Some("Bash|Read"), &[": names"]),
        group(Some("Bas"), &[": prefix-is-not-a-name"]),
        group(Some("^mcp__mem"), &[": regex"]),
        group(Some("Edit.*"), &[": edit-regex"]),
        group(Some("[unclosed"), &[": invalid"]),
    ]}));
    let session = fx.session();
    let all = [": absent", ": star", ": empty"];

    let with = |extra: &[&str]| -> Vec<String> {
        all.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    assert_eq!(commands(&bash(&session, "ls")), with(&[": names"]));
    assert_eq!(
        commands(&gate(&session, "read_file", json!({"path": "a"}))),
        with(&[": names"])
    );
    assert_eq!(
        commands(&gate(&session, "mcp__memory__get", json!({}))),
        with(&[": regex"])
    );
    assert_eq!(
        commands(&gate(&session, "str_replace", json!({"path": "a"}))),
        with(&[": edit-regex"])
    );
    assert_eq!(
        commands(&gate(&session, "mcp__other__get", json!({}))),
        with(&[])
    );

    let listing = fx.engine().list();
    let invalid = listing
        .hooks
        .iter()
        .find(|h| h.command == ": invalid")
        .unwrap();
    assert!(invalid.matcher_error.is_some());
    assert!(!invalid.active);
    let names = listing
        .hooks
        .iter()
        .find(|h| h.command == ": names")
        .unwrap();
    assert_eq!(names.matcher.as_deref(), Some("Bash|Read"));
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.message.contains("\"[unclosed\" is not a valid regex")
                && w.event.as_deref() == Some("PreToolUse")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn compile_matcher_forms() {
    assert!(matches!(
        claude::compile_matcher("*"),
        Ok(HookMatcher::Always)
    ));
    assert!(matches!(
        claude::compile_matcher("  "),
        Ok(HookMatcher::Always)
    ));
    match claude::compile_matcher("Bash|Edit|mcp__x__y") {
        Ok(HookMatcher::Names(n)) => assert_eq!(n, ["Bash", "Edit", "mcp__x__y"]),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        claude::compile_matcher("Edit.*"),
        Ok(HookMatcher::Regex(_))
    ));
    assert!(claude::compile_matcher("Write(*.ts)").is_err());
    // A regex is unanchored: `Edit.*` also matches NotebookEdit.
    let re = claude::compile_matcher("Edit.*").unwrap();
    assert!(re.test("NotebookEdit").fires());
    let names = claude::compile_matcher("Edit").unwrap();
    assert!(!names.test("NotebookEdit").fires());
}

// ---------------------------------------------------------------------------------
// Tool mapping
// ---------------------------------------------------------------------------------

#[test]
fn canonical_tools_map_to_claude_tools_and_unmapped_tools_never_reach_claude_hooks() {
    let fx = Fx::new();
    let names = [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "Grep",
        "Agent",
        "mcp__srv__tool",
    ];
    let groups: Vec<Value> = names
        .iter()
        .map(|n| group(Some(&format!("^{n}$")), &[&format!(": {n}")]))
        .collect();
    fx.claude_user(json!({ "PreToolUse": groups, "PostToolUse": [group(None, &[": post"])] }));
    let session = fx.session();
    let ws = fx.ws();
    let abs = |p: &str| ws.join(p).display().to_string();

    let cases: Vec<(&str, Value, &str, Value)> = vec![
        (
            "run_shell",
            json!({"command": "ls"}),
            "Bash",
            json!({"command": "ls"}),
        ),
        (
            "read_file",
            json!({"path": "a.txt"}),
            "Read",
            json!({"file_path": abs("a.txt")}),
        ),
        (
            "write_file",
            json!({"path": "./b.txt", "content": "hi"}),
            "Write",
            json!({"file_path": abs("b.txt"), "content": "hi"}),
        ),
        (
            "str_replace",
            json!({"path": "/abs/c.rs", "old_string": "a", "new_string": "b"}),
            "Edit",
            json!({"file_path": "/abs/c.rs", "old_string": "a", "new_string": "b"}),
        ),
        (
            "search_code",
            json!({"query": "fn main", "path": "src"}),
            "Grep",
            json!({"pattern": "fn main", "path": abs("src")}),
        ),
        (
            "search_code",
            json!({"pattern": "TODO"}),
            "Grep",
            json!({"pattern": "TODO"}),
        ),
        (
            "explore",
            json!({"description": "look", "task": "find the bug"}),
            "Agent",
            json!({"description": "look", "prompt": "find the bug"}),
        ),
        (
            "mcp__srv__tool",
            json!({"q": 1}),
            "mcp__srv__tool",
            json!({"q": 1}),
        ),
    ];
    for (tool, input, name, expected) in cases {
        let v = gate(&session, tool, input);
        assert_eq!(commands(&v), vec![format!(": {name}")], "{tool}");
        let stdin = stdin_of(&v, 0);
        assert_eq!(stdin["tool_name"], json!(name), "{tool}");
        assert_eq!(stdin["tool_input"], expected, "{tool}");
    }

    // No Claude equivalent: not even a match-all hook sees these.
    fx.claude_user(json!({"PreToolUse": [group(None, &[": all"]), group(Some(".*"), &[": any"])]}));
    let session = fx.session();
    assert_eq!(commands(&bash(&session, "ls")), [": all", ": any"]);
    for tool in [
        "delete_file",
        "list_dir",
        "run_background",
        "semantic_search",
    ] {
        let v = gate(&session, tool, json!({"path": "x"}));
        assert!(v.runs.is_empty(), "{tool} reached a Claude hook");
        assert_eq!(v.effective_decision(), Decision::Allow);
    }
}

// ---------------------------------------------------------------------------------
// PreToolUse responses
// ---------------------------------------------------------------------------------

#[test]
fn permission_decisions_allow_deny_ask_defer() {
    let v = verdict_of(&pre_tool("allow", "looks fine"));
    assert_eq!(v.decision, Some(Decision::Allow));
    // An allow's reason is for the user only (Claude Code never shows it to the model).
    assert_eq!(v.agent_message, None);
    assert_eq!(v.user_message.as_deref(), Some("looks fine"));
    assert_eq!(v.runs[0].result, RunOutcome::Allow);

    let v = verdict_of(&pre_tool("deny", "  no rm -rf  "));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("no rm -rf"));
    assert!(v.runs[0].failure.is_none());

    let v = verdict_of(&pre_tool("ask", "sure?"));
    assert_eq!(v.effective_decision(), Decision::Ask);
    assert_eq!(v.agent_message.as_deref(), Some("sure?"));

    let v = verdict_of(&pre_tool("defer", ""));
    assert_eq!(v.effective_decision(), Decision::Ask);
}

#[test]
fn unknown_permission_decision_fails_closed() {
    let v = verdict_of(&pre_tool("maybe", "hmm"));
    assert_eq!(v.effective_decision(), Decision::Deny);
    let run = &v.runs[0];
    assert_eq!(run.result, RunOutcome::Failed);
    assert_eq!(run.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
    assert_eq!(run.policy, FailurePolicy::Closed);
    assert!(
        v.agent_message
            .as_deref()
            .unwrap()
            .contains("blocked because the hook fails closed"),
        "{:?}",
        v.agent_message
    );
}

#[test]
fn updated_input_and_additional_context() {
    let v = verdict_of(&answer(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "ls -la"},
        "additionalContext": "the repo is large",
    }})));
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(v.updated_input, Some(obj(json!({"command": "ls -la"}))));
    assert_eq!(v.inject_context.as_deref(), Some("the repo is large"));

    // Claude-shaped keys come back as the canonical tool's keys.
    let fx = Fx::new();
    fx.claude_user(
        json!({"PreToolUse": [group(Some("Read"), &[&answer(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"file_path": "/safe/copy.txt"},
        }}))])]}),
    );
    let v = gate(&fx.session(), "read_file", json!({"path": "secret.txt"}));
    assert_eq!(v.decision, None);
    assert_eq!(
        v.updated_input,
        Some(obj(json!({"path": "/safe/copy.txt"})))
    );
}

#[test]
fn continue_false_halts_and_decision_block_denies() {
    // `continue: false` stops the run; the reason is for the user, not the model.
    let v = verdict_of(&answer(
        json!({"continue": false, "stopReason": "build is red"}),
    ));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message, None);
    assert_eq!(v.user_message.as_deref(), Some("build is red"));
    assert_eq!(
        v.halt,
        Some(Halt {
            reason: "build is red".into()
        })
    );

    let v = verdict_of(&answer(
        json!({"decision": "block", "reason": "not on main"}),
    ));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("not on main"));

    let v = verdict_of(&answer(json!({"decision": "approve"})));
    assert_eq!(v.decision, Some(Decision::Allow));
}

#[test]
fn empty_invalid_and_non_object_stdout() {
    let v = verdict_of("exit 0");
    assert_eq!(v.decision, None);
    assert_eq!(v.runs[0].result, RunOutcome::None);
    assert!(v.runs[0].parse_ok);

    // Stdout that does not start with `{` is plain text: ignored on PreToolUse, as
    // Claude Code logs it; never a failure.
    for plain in [
        "echo Command looks safe",
        "echo '[1, 2]'",
        "echo '\"allow\"'",
    ] {
        let v = verdict_of(plain);
        assert_eq!(v.effective_decision(), Decision::Allow, "{plain}");
        assert!(v.runs[0].failure.is_none(), "{plain}");
        assert_eq!(v.inject_context, None, "{plain}");
    }
    for bad in ["echo '{\"unterminated'", "echo '{ not json }'"] {
        let v = verdict_of(bad);
        assert_eq!(v.effective_decision(), Decision::Deny, "{bad}");
        let run = &v.runs[0];
        assert_eq!(
            run.failure.as_ref().unwrap().kind,
            FailureKind::InvalidJson,
            "{bad}"
        );
        assert!(!run.parse_ok, "{bad}");
    }
}

#[test]
fn exit_two_denies_with_stderr_even_when_stdout_allows() {
    let v = verdict_of("echo '  force pushes are not allowed  ' >&2; exit 2");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(
        v.agent_message.as_deref(),
        Some("force pushes are not allowed")
    );
    assert!(
        v.runs[0].failure.is_none(),
        "exit 2 is a decision, not a failure"
    );
    assert_eq!(v.runs[0].exit_code, Some(2));

    let v = verdict_of(&format!(
        "{}; echo blocked >&2; exit 2",
        pre_tool("allow", "fine")
    ));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("blocked"));
}

#[test]
fn other_exits_fail_closed() {
    // A valid JSON answer is honoured whatever the exit code (Claude Code ignores it).
    let v = verdict_of(&format!("{}; exit 1", pre_tool("deny", "no rm")));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("no rm"));
    assert!(v.runs[0].failure.is_none());
    let v = verdict_of(&format!("{}; exit 1", pre_tool("allow", "ok")));
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert!(v.runs[0].failure.is_none());
    for command in [
        "echo oops >&2; exit 1",
        "echo status line; exit 1",
        // Killed by a signal (a hook is the init of its own pid namespace, which cannot
        // kill itself, so a child dies and the shell passes its status on).
        "sh -c 'kill -9 $$'; exit $?",
    ] {
        let v = verdict_of(command);
        assert_eq!(v.effective_decision(), Decision::Deny, "{command}");
        let run = &v.runs[0];
        assert_eq!(run.result, RunOutcome::Failed, "{command}");
        assert_eq!(
            run.failure.as_ref().unwrap().kind,
            FailureKind::Exit,
            "{command}"
        );
        assert!(
            v.agent_message
                .as_deref()
                .unwrap()
                .contains("blocked because the hook fails closed"),
            "{command}: {:?}",
            v.agent_message
        );
    }
}

#[test]
fn exec_form_args_run_without_a_shell_and_expand_the_project_dir() {
    let fx = Fx::new();
    fx.claude_user(json!({"PreToolUse": [{"hooks": [{
        "type": "command",
        "command": "sh",
        "args": ["-c", "printf '%s|%s' \"$1\" \"$2\" >&2; exit 2", "argv0", "${CLAUDE_PROJECT_DIR}/sub dir", "it's $HOME"],
    }]}]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(
        v.agent_message,
        Some(format!("{}/sub dir|it's $HOME", fx.ws().display()))
    );
}

// ---------------------------------------------------------------------------------
// Warnings and unsupported entries
// ---------------------------------------------------------------------------------

#[test]
fn mcp_tool_handlers_are_warned_about_per_hook_and_never_run() {
    let fx = Fx::new();
    let source = fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "mcp_tool", "server": "guard", "tool": "check", "input": {"cmd": "${tool_input.command}"}},
        cmd(": runs"),
    ]}]}));
    let want = "\"PreToolUse\" group 1 hook 1 has type \"mcp_tool\" on \"PreToolUse\": mcp_tool handlers are not supported yet: this hook does not run (copse-hooks does not call MCP tools from hooks; listed only)";
    let engine = fx.engine();
    let listing = engine.list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(messages, [want], "one warning, for that hook only");
    let mcp = listing
        .hooks
        .iter()
        .find(|h| h.command == "mcp_tool: guard/check")
        .expect("the mcp_tool hook is listed, never silently skipped");
    assert!(!mcp.supported, "{mcp:?}");
    let report = engine.lint(&[source]);
    assert!(
        report.problems.iter().any(|p| p.message == want),
        "{:?}",
        report.problems
    );
    assert!(
        !report.problems.iter().any(|p| p.message.contains("nknown")),
        "{:?}",
        report.problems
    );
    // At the gate only the command hook runs.
    let v = bash(&fx.session(), "ls");
    assert_eq!(commands(&v), [": runs"]);
}

#[test]
fn model_switch_events_are_recognised_and_unsupported_with_a_reason_never_unknown() {
    let fx = Fx::new();
    fx.claude_user(json!({
        "PreModelSwitch": [group(None, &[": pre-switch"])],
        "PostModelSwitch": [group(None, &[": post-switch"])],
    }));
    let listing = fx.engine().list();
    for event in ["PreModelSwitch", "PostModelSwitch"] {
        let w = listing
            .warnings
            .iter()
            .find(|w| w.event.as_deref() == Some(event))
            .unwrap_or_else(|| panic!("no warning for {event}: {:#?}", listing.warnings));
        assert_eq!(
            w.message,
            format!(
                "Claude hook event \"{event}\" is recognised by Claude Code but not supported by copse-hooks yet (copse hosts pick the model outside the hook pipeline; no canonical event for a model switch) — entries ignored"
            )
        );
    }
    assert!(
        !listing
            .warnings
            .iter()
            .any(|w| w.message.contains("Unknown")),
        "{:#?}",
        listing.warnings
    );
    for command in [": pre-switch", ": post-switch"] {
        let h = listing
            .hooks
            .iter()
            .find(|h| h.command == command)
            .expect("recognised events are listed");
        assert!(!h.supported && !h.active && h.canonical.is_none());
    }
}

#[test]
fn warnings_for_unsupported_and_unknown_events_and_other_handler_types() {
    let fx = Fx::new();
    let source = fx.claude_user(json!({
        "PostCompact": [group(None, &[": notify"])],
        "preToolUse": [group(None, &[": cursor-name"])],
        "BeforeEverything": [group(None, &[": made-up"])],
        "PermissionRequest": [],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "http", "url": "http://127.0.0.1:9/pre"},
            {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"},
            cmd(": runs"),
            {"type": "command", "command": ": conditional", "if": "Bash(git *)"},
            {"type": "command", "command": ": slow", "timeout": -5},
            {"type": "command", "command": ": quick", "timeout": 5},
            {"command": ": untyped"},
        ]}],
        "UserPromptSubmit": [group(Some("ignored"), &[": prompt"])],
    }));
    let engine = fx.engine();
    let listing = engine.list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    let has = |needle: &str| {
        assert!(
            messages.iter().any(|m| m.contains(needle)),
            "no warning contains {needle:?}: {messages:#?}"
        );
    };
    has(
        "Claude hook event \"PostCompact\" is recognised by Claude Code but not supported by copse-hooks yet (no canonical event after compaction yet) — entries ignored",
    );
    has("Unknown Claude hook event \"preToolUse\" — entries ignored");
    has("use PreToolUse");
    has("Unknown Claude hook event \"BeforeEverything\" — entries ignored");
    assert!(
        !messages.iter().any(|m| m.contains("type \"http\"")),
        "http handlers run now: {messages:#?}"
    );
    has("\"PreToolUse\" group 1 hook 2 has type \"prompt\" on \"PreToolUse\"");
    has(
        "\"PreToolUse\" group 1 hook 5 \"timeout\" must be a positive number of seconds — using the default 600s",
    );
    has("\"PreToolUse\" group 1 hook 7 has no \"type\"");
    assert!(
        !messages.iter().any(|m| m.contains("PermissionRequest")),
        "an empty array declares nothing: {messages:#?}"
    );
    assert!(
        listing
            .warnings
            .iter()
            .all(|w| w.source == source && w.scope == Scope::User)
    );
    let notification = listing
        .warnings
        .iter()
        .find(|w| w.message.contains("PostCompact"))
        .unwrap();
    assert_eq!(notification.event.as_deref(), Some("PostCompact"));

    let find = |command: &str| listing.hooks.iter().find(|h| h.command == command);
    let http = find("http: http://127.0.0.1:9/pre").expect("http handler is listed");
    assert!(http.supported && http.active);
    assert_eq!(http.event, "PreToolUse");
    assert_eq!(http.entry, 1);
    assert!(find("prompt: Is this safe? $ARGUMENTS").is_some_and(|h| !h.supported));
    assert!(
        find(": conditional").is_some_and(|h| h.supported && h.active),
        "an `if` condition is evaluated, not a reason to skip the hook"
    );
    let notify = find(": notify").expect("recognised events are listed");
    assert!(!notify.supported && notify.canonical.is_none());
    assert!(
        find(": cursor-name").is_none(),
        "unknown events are not listed"
    );
    assert!(find(": made-up").is_none());
    assert_eq!(find(": slow").unwrap().timeout_ms, 600_000);
    assert_eq!(find(": quick").unwrap().timeout_ms, 5_000);
    assert_eq!(find(": runs").unwrap().timeout_ms, 600_000);
    assert_eq!(find(": prompt").unwrap().timeout_ms, 30_000);
    assert!(
        find(": prompt").unwrap().active,
        "a matcher on UserPromptSubmit is ignored"
    );
    assert!(find(": runs").unwrap().active && find(": runs").unwrap().fail_closed);

    // The command and http handlers run (the http one fails: nothing listens on
    // the discard port), and `if: Bash(git *)` only on git commands.
    let http_pre = "http: http://127.0.0.1:9/pre";
    let v = bash(&engine.session(SessionIdentity::new("c")), "ls");
    assert_eq!(
        commands(&v),
        [http_pre, ": runs", ": slow", ": quick", ": untyped"]
    );
    let v = bash(&engine.session(SessionIdentity::new("c")), "git push");
    assert_eq!(
        commands(&v),
        [
            http_pre,
            ": runs",
            ": conditional",
            ": slow",
            ": quick",
            ": untyped"
        ]
    );
}

#[test]
fn structural_problems_are_reported_not_fatal() {
    let fx = Fx::new();
    fx.claude_user(json!({
        "PreToolUse": [
            {"matcher": "Bash", "command": ": flat"},
            "not a group",
            {"hooks": [{"type": "command", "command": "  "}, 7, cmd(": fine")]},
        ],
        "Stop": {"hooks": []},
    }));
    let listing = fx.engine().list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    for needle in [
        "\"PreToolUse\" group 1 has no \"hooks\" array — skipped (this looks like Cursor's flat",
        "\"PreToolUse\" group 2 must be an object",
        "\"PreToolUse\" group 3 hook 1 has a missing or empty \"command\" — skipped",
        "\"PreToolUse\" group 3 hook 2 must be an object — skipped",
        "\"Stop\" must be an array",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(needle)),
            "{needle}: {messages:#?}"
        );
    }
    assert_eq!(listing.hooks.len(), 1);
    assert_eq!(listing.hooks[0].command, ": fine");
    assert_eq!(listing.hooks[0].entry, 3);
}

#[test]
fn published_events_and_reasons() {
    assert_eq!(claude::PUBLISHED_EVENTS.len(), 33);
    let mut sorted = claude::PUBLISHED_EVENTS.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 33, "no duplicates");
    for e in claude::PUBLISHED_EVENTS {
        match claude::canonical_for(e) {
            Some(_) => assert!(claude::unsupported_reason(e).is_none(), "{e}"),
            None => assert!(
                claude::unsupported_reason(e).is_some(),
                "{e} needs a reason"
            ),
        }
    }
    let wired = claude::PUBLISHED_EVENTS
        .iter()
        .filter(|e| claude::canonical_for(e).is_some())
        .count();
    assert_eq!(wired, 12);
    assert!(claude::unsupported_reason("preToolUse").is_none());
    assert_eq!(claude::DEFAULT_TIMEOUT, Duration::from_secs(600));
}

// ---------------------------------------------------------------------------------
// Cursor and Claude together
// ---------------------------------------------------------------------------------

#[test]
fn cursor_and_claude_hooks_merge_into_one_verdict() {
    let fx = Fx::new();
    fx.write(
        "home/.cursor/hooks.json",
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": answer(json!({"permission": "ask", "agent_message": "cursor asks"}))}
        ]}})
        .to_string(),
    );
    fx.claude_user(
        json!({"PreToolUse": [group(Some("Bash"), &[&pre_tool("deny", "claude denies")])]}),
    );
    let v = bash(&fx.session(), "git push");
    assert_eq!(v.effective_decision(), Decision::Deny, "strictest wins");
    assert_eq!(
        v.runs
            .iter()
            .map(|r| (r.dialect, r.event.as_str(), r.result))
            .collect::<Vec<_>>(),
        vec![
            (Dialect::Cursor, "beforeShellExecution", RunOutcome::Ask),
            (Dialect::Claude, "PreToolUse", RunOutcome::Deny),
        ]
    );
    assert_eq!(
        v.agent_message.as_deref(),
        Some("cursor asks\n\nclaude denies")
    );
}

// ---------------------------------------------------------------------------------
// Other events through the engine
// ---------------------------------------------------------------------------------

fn after_tool(is_error: bool) -> EventPayload {
    EventPayload::AfterToolUse({
        let mut result = ToolResult::new(
            "run_shell",
            obj(json!({"command": "cargo test"})),
            if is_error { "Exit code 101" } else { "ok" },
        );
        result.is_error = is_error;
        result.duration_ms = 42;
        result.tool_call_id = "call-1".into();
        result.response = None;
        result
    })
}

#[test]
fn engine_fires_other_claude_events() {
    let fx = Fx::new();
    let log = fx.at("events.log");
    let rec = |tag: &str| format!("echo {tag} >> {log}");
    fx.claude_user(json!({
        "UserPromptSubmit": [group(None, &["echo 'no secrets in prompts' >&2; exit 2"])],
        "PostToolUse": [group(Some("Bash"), &[&rec("post")])],
        "PostToolUseFailure": [group(Some("Bash"), &[&rec("failure")])],
        "Stop": [group(None, &[&answer(json!({"decision": "block", "reason": "run the linter too"}))])],
        "SubagentStart": [group(Some("explore"), &[&answer(json!({"hookSpecificOutput": {
            "hookEventName": "SubagentStart", "additionalContext": "stay in src/"}}))])],
        "SessionStart": [group(Some("resume"), &[&rec("resume")]), group(Some("startup"), &[&rec("startup")])],
    }));
    let session = fx.session();

    match session.fire(EventPayload::BeforeSubmitPrompt {
        prompt: "hi".into(),
    }) {
        Fired::Verdict(v) => {
            assert_eq!(
                v.halt,
                Some(Halt {
                    reason: "no secrets in prompts".into()
                })
            );
            assert_eq!(v.user_message.as_deref(), Some("no secrets in prompts"));
            let stdin = stdin_of(&v, 0);
            assert_eq!(stdin["hook_event_name"], "UserPromptSubmit");
            assert_eq!(stdin["prompt"], "hi");
        }
        other => panic!("{other:?}"),
    }
    match session.fire(EventPayload::SubagentStart {
        subagent_type: "explore".into(),
    }) {
        Fired::Verdict(v) => {
            assert_eq!(v.decision, None);
            assert_eq!(v.inject_context.as_deref(), Some("stay in src/"));
        }
        other => panic!("{other:?}"),
    }
    session.fire(EventPayload::SessionStart { first_turn: true });
    session.fire(after_tool(false));
    session.fire(after_tool(true));
    session.fire(EventPayload::Stop {
        status: "completed".into(),
    });
    session.wait_idle();

    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    assert_eq!(lines, ["failure", "post", "startup"]);

    let held: Vec<_> = session.queue().into_iter().filter(|m| m.held).collect();
    assert_eq!(held.len(), 1, "{:?}", session.queue());
    assert_eq!(held[0].text, "run the linter too");
    assert_eq!(held[0].origin.dialect, Dialect::Claude);
    assert_eq!(held[0].origin.event, "Stop");
}

// ---------------------------------------------------------------------------------
// The adapter directly: marshalling and reading every wired event
// ---------------------------------------------------------------------------------

fn parse_user(hooks: Value) -> ParsedConfig {
    Claude.parse(
        &json!({ "hooks": hooks }).to_string(),
        Path::new("/home/u/.claude/settings.json"),
        Scope::User,
        None,
    )
}

/// The single hook of `event` with this matcher.
fn spec(event: &str, matcher: Option<&str>) -> HookSpec {
    let parsed = parse_user(json!({ event: [group(matcher, &[": h"])] }));
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    parsed.hooks.into_iter().next().unwrap()
}

const ROOT: &str = "/fixture/workspace";

fn with_ctx<T>(model: bool, f: impl FnOnce(&Context<'_>) -> T) -> T {
    let mut session = SessionIdentity::new("conv-fixture-1");
    if model {
        session.model = Some(ModelIdentity {
            model: "claude-sonnet-4".into(),
            model_id: "anthropic/claude-sonnet-4".into(),
            model_params: Vec::new(),
        });
    }
    let roots = vec![PathBuf::from(ROOT)];
    let ctx = Context {
        session: &session,
        workspace_roots: &roots,
    };
    f(&ctx)
}

fn marshal(event: &str, payload: &EventPayload, model: bool) -> String {
    let hook = spec(event, None);
    with_ctx(model, |ctx| {
        assert!(Claude.applies(&hook, payload, ctx), "{event} applies");
        Claude.marshal(&hook, payload, ctx).to_string()
    })
}

fn applies(event: &str, matcher: Option<&str>, payload: &EventPayload) -> bool {
    let hook = spec(event, matcher);
    with_ctx(false, |ctx| Claude.applies(&hook, payload, ctx))
}

const ENVELOPE: &str =
    r#""session_id":"conv-fixture-1","transcript_path":"","cwd":"/fixture/workspace""#;

#[test]
fn marshal_every_wired_event() {
    let agent = with_ctx(false, |ctx| claude::agent_id(ctx.session, "explore"));
    #[allow(non_snake_case)]
    let AGENT = agent.as_str();
    let cases: Vec<(&str, EventPayload, bool, String)> = vec![
        (
            "PostToolUse",
            after_tool(false),
            false,
            r#""hook_event_name":"PostToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_response":{"stdout":"ok","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"call-1","duration_ms":42"#.into(),
        ),
        (
            "PostToolUseFailure",
            after_tool(true),
            false,
            r#""hook_event_name":"PostToolUseFailure","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_use_id":"call-1","error":"Exit code 101","is_interrupt":false,"duration_ms":42"#.into(),
        ),
        (
            "UserPromptSubmit",
            EventPayload::BeforeSubmitPrompt { prompt: "Fix the failing test.".into() },
            false,
            r#""hook_event_name":"UserPromptSubmit","permission_mode":"default","prompt":"Fix the failing test.""#.into(),
        ),
        (
            "Stop",
            EventPayload::Stop { status: "completed".into() },
            false,
            r#""hook_event_name":"Stop","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"""#.into(),
        ),
        (
            "SubagentStart",
            EventPayload::SubagentStart { subagent_type: "explore".into() },
            false,
            format!(r#""hook_event_name":"SubagentStart","permission_mode":"default","agent_id":"{AGENT}","agent_type":"explore""#),
        ),
        (
            "SubagentStop",
            EventPayload::SubagentStop { subagent_type: "explore".into(), status: "completed".into() },
            false,
            format!(r#""hook_event_name":"SubagentStop","permission_mode":"default","stop_hook_active":false,"agent_id":"{AGENT}","agent_type":"explore","agent_transcript_path":"","last_assistant_message":"""#),
        ),
        (
            "SessionStart",
            EventPayload::SessionStart { first_turn: true },
            false,
            r#""hook_event_name":"SessionStart","source":"startup""#.into(),
        ),
        (
            "SessionStart",
            EventPayload::SessionStart { first_turn: true },
            true,
            r#""hook_event_name":"SessionStart","source":"startup","model":"claude-sonnet-4""#.into(),
        ),
        (
            "SessionEnd",
            EventPayload::SessionEnd { reason: "user_close".into(), duration_ms: 5 },
            false,
            r#""hook_event_name":"SessionEnd","reason":"prompt_input_exit""#.into(),
        ),
        (
            "PreCompact",
            EventPayload::PreCompact({ let mut compaction = Compaction::default();
compaction.trigger = "auto".into();
compaction }),
            true,
            r#""hook_event_name":"PreCompact","trigger":"auto","custom_instructions":"""#.into(),
        ),
    ];
    for (event, payload, model, rest) in cases {
        assert_eq!(
            marshal(event, &payload, model),
            format!("{{{ENVELOPE},{rest}}}"),
            "{event}"
        );
    }
    // The model is sent on SessionStart only.
    assert!(
        !marshal(
            "Stop",
            &EventPayload::Stop {
                status: "completed".into()
            },
            true
        )
        .contains("model")
    );
}

#[test]
fn turn_id_is_sent_as_prompt_id_once_known() {
    let hook = spec("UserPromptSubmit", None);
    let mut session = SessionIdentity::new("c");
    session.generation_id = "gen-7".into();
    let roots: Vec<PathBuf> = Vec::new();
    let ctx = Context {
        session: &session,
        workspace_roots: &roots,
    };
    let v = Claude.marshal(
        &hook,
        &EventPayload::BeforeSubmitPrompt { prompt: "p".into() },
        &ctx,
    );
    assert_eq!(
        v.to_string(),
        r#"{"session_id":"c","transcript_path":"","cwd":"","hook_event_name":"UserPromptSubmit","prompt_id":"gen-7","permission_mode":"default","prompt":"p"}"#
    );
    assert!(
        Claude.vendor_env(&hook, &ctx).is_empty(),
        "no root, no CLAUDE_PROJECT_DIR"
    );
}

#[test]
fn matcher_subjects_per_event() {
    let post = after_tool(false);
    let failed = after_tool(true);
    // PostToolUse / PostToolUseFailure split on is_error, matched on the Claude tool name.
    assert!(applies("PostToolUse", Some("Bash"), &post));
    assert!(!applies("PostToolUse", Some("Bash"), &failed));
    assert!(applies("PostToolUseFailure", Some("Bash"), &failed));
    assert!(!applies("PostToolUseFailure", None, &post));
    assert!(!applies("PostToolUse", Some("Read"), &post));
    // SessionStart's subject is the literal source `startup`.
    let start = EventPayload::SessionStart { first_turn: true };
    assert!(applies("SessionStart", Some("startup"), &start));
    assert!(!applies("SessionStart", Some("resume|clear"), &start));
    // Subagents match on the agent type.
    let sub = EventPayload::SubagentStart {
        subagent_type: "explore".into(),
    };
    assert!(applies("SubagentStart", Some("explore|plan"), &sub));
    assert!(!applies("SubagentStart", Some("general_purpose"), &sub));
    let stop = EventPayload::SubagentStop {
        subagent_type: "explore".into(),
        status: "completed".into(),
    };
    assert!(applies("SubagentStop", Some("^exp"), &stop));
    assert!(!applies("SubagentStop", Some("^plan"), &stop));
    // PreCompact on the trigger, SessionEnd on the reason (in Claude's vocabulary).
    let compact = EventPayload::PreCompact({
        let mut compaction = Compaction::default();
        compaction.trigger = "manual".into();
        compaction
    });
    assert!(applies("PreCompact", Some("manual"), &compact));
    assert!(!applies("PreCompact", Some("auto"), &compact));
    let end = EventPayload::SessionEnd {
        reason: "completed".into(),
        duration_ms: 1,
    };
    assert!(applies("SessionEnd", Some("other"), &end));
    assert!(!applies("SessionEnd", Some("logout"), &end));
    // UserPromptSubmit and Stop ignore their matcher.
    let prompt = EventPayload::BeforeSubmitPrompt { prompt: "x".into() };
    assert!(applies("UserPromptSubmit", Some("NeverMatches"), &prompt));
    assert!(applies(
        "Stop",
        Some("[even invalid"),
        &EventPayload::Stop {
            status: "completed".into()
        }
    ));
    // A hook never applies to another event.
    assert!(!applies("Stop", None, &prompt));
    assert!(!applies("PreToolUse", None, &post));
}

fn read(
    event: &str,
    payload: &EventPayload,
    exit: i32,
    stdout: &str,
    stderr: &str,
) -> Interpretation {
    let hook = spec(event, None);
    Claude.interpret(
        &hook,
        payload,
        &ProcessResult {
            exit_code: Some(exit),
            signal: None,
            stdout: stdout.as_bytes(),
            stderr: stderr.as_bytes(),
        },
    )
}

fn clean(i: &Interpretation) -> &Outcome {
    assert!(i.failure.is_none(), "unexpected failure {:?}", i.failure);
    &i.outcome
}

fn held(text: &str) -> Option<QueueRequest> {
    Some(QueueRequest {
        text: text.into(),
        send_now: false,
        held: true,
    })
}

fn queued(text: &str) -> Option<QueueRequest> {
    Some(QueueRequest {
        text: text.into(),
        send_now: false,
        held: false,
    })
}

#[test]
fn user_prompt_submit_responses() {
    let p = EventPayload::BeforeSubmitPrompt { prompt: "p".into() };
    let e = "UserPromptSubmit";
    let o = read(e, &p, 2, "", " secret detected \n");
    assert_eq!(
        clean(&o).halt,
        Some(Halt {
            reason: "secret detected".into()
        })
    );
    assert_eq!(o.outcome.user_message.as_deref(), Some("secret detected"));
    let o = read(e, &p, 2, "", "");
    assert_eq!(
        clean(&o).halt.as_ref().unwrap().reason,
        claude::PROMPT_BLOCKED
    );
    assert_eq!(
        o.outcome.user_message.as_deref(),
        Some(claude::PROMPT_BLOCKED)
    );
    let o = read(
        e,
        &p,
        0,
        r#"{"continue": false, "stopReason": "quota"}"#,
        "",
    );
    assert_eq!(clean(&o).halt.as_ref().unwrap().reason, "quota");
    let o = read(
        e,
        &p,
        0,
        r#"{"decision": "block", "reason": "off topic"}"#,
        "",
    );
    assert_eq!(clean(&o).halt.as_ref().unwrap().reason, "off topic");
    assert_eq!(o.outcome.user_message.as_deref(), Some("off topic"));
    let o = read(
        e,
        &p,
        0,
        r#"{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "today is Monday"}}"#,
        "",
    );
    assert_eq!(clean(&o).inject_context.as_deref(), Some("today is Monday"));
    assert!(o.outcome.halt.is_none());
    // Plain stdout is context on UserPromptSubmit (the documented way to add it).
    let o = read(e, &p, 0, "Current branch: main", "");
    assert_eq!(
        clean(&o).inject_context.as_deref(),
        Some("Current branch: main")
    );
    assert!(o.outcome.halt.is_none());
    let o = read(e, &p, 0, "[]", "");
    assert_eq!(clean(&o).inject_context.as_deref(), Some("[]"));
    let o = read(e, &p, 0, "{oops", "");
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
    let o = read(e, &p, 1, "", "boom");
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::Exit);
    assert!(read(e, &p, 0, "", "").outcome.is_empty());
}

#[test]
fn stop_and_subagent_stop_responses_are_held_follow_ups() {
    let stop = EventPayload::Stop {
        status: "completed".into(),
    };
    let sub = EventPayload::SubagentStop {
        subagent_type: "explore".into(),
        status: "completed".into(),
    };
    for (e, p) in [("Stop", &stop), ("SubagentStop", &sub)] {
        let o = read(e, p, 2, "", "tests still fail\n");
        assert_eq!(clean(&o).queue_message, held("tests still fail"), "{e}");
        assert_eq!(o.outcome.decision, None, "{e}");
        let o = read(
            e,
            p,
            0,
            r#"{"decision": "block", "reason": "write the changelog"}"#,
            "",
        );
        assert_eq!(clean(&o).queue_message, held("write the changelog"), "{e}");
        let o = read(
            e,
            p,
            0,
            &format!(
                r#"{{"hookSpecificOutput": {{"hookEventName": "{e}", "additionalContext": "also lint"}}}}"#
            ),
            "",
        );
        assert_eq!(clean(&o).queue_message, held("also lint"), "{e}");
        let o = read(e, p, 0, r#"{"continue": false, "stopReason": "done"}"#, "");
        assert_eq!(clean(&o).queue_message, None, "{e}: continue:false stops");
        assert_eq!(
            o.outcome.halt,
            Some(Halt {
                reason: "done".into()
            }),
            "{e}"
        );
        // Plain text is ignored; broken JSON is a (non-blocking) failure.
        let o = read(e, p, 0, "not json", "");
        assert!(o.failure.is_none() && o.parse_ok, "{e}");
        assert!(o.outcome.is_empty(), "{e}");
        let o = read(e, p, 0, "{not json", "");
        assert_eq!(
            o.failure.as_ref().unwrap().kind,
            FailureKind::InvalidJson,
            "{e}"
        );
        let o = read(e, p, 3, "", "");
        assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::Exit, "{e}");
        assert!(
            read(e, p, 2, "", "").outcome.is_empty(),
            "{e}: nothing to say"
        );
    }
}

#[test]
fn post_tool_responses_are_queued_not_held() {
    let ok = after_tool(false);
    let failed = after_tool(true);
    let o = read("PostToolUse", &ok, 2, "", "lint errors: 3");
    assert_eq!(clean(&o).queue_message, queued("lint errors: 3"));
    let o = read(
        "PostToolUse",
        &ok,
        0,
        r#"{"decision": "block", "reason": "format the file"}"#,
        "",
    );
    assert_eq!(clean(&o).queue_message, queued("format the file"));
    let o = read(
        "PostToolUse",
        &ok,
        0,
        r#"{"decision": "block", "reason": "format", "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "see rustfmt.toml"}}"#,
        "",
    );
    assert_eq!(
        clean(&o).queue_message,
        queued("format\n\nsee rustfmt.toml")
    );
    let o = read(
        "PostToolUseFailure",
        &failed,
        0,
        r#"{"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "flaky test, retry once"}}"#,
        "",
    );
    assert_eq!(clean(&o).queue_message, queued("flaky test, retry once"));
    assert_eq!(clean(&o).decision, None);
    let o = read("PostToolUseFailure", &failed, 2, "", "see the log");
    assert_eq!(clean(&o).queue_message, queued("see the log"));
    let o = read(
        "PostToolUse",
        &ok,
        0,
        r#"{"continue": false, "stopReason": "tests deleted"}"#,
        "",
    );
    assert_eq!(
        clean(&o).halt,
        Some(Halt {
            reason: "tests deleted".into()
        })
    );
    let o = read("PostToolUse", &ok, 0, "{", "");
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
    assert!(!o.parse_ok);
    let o = read("PostToolUse", &ok, 0, "formatted 1 file", "");
    assert!(o.failure.is_none() && o.outcome.is_empty());
}

#[test]
fn events_that_cannot_block_show_exit_two_stderr() {
    let cases = [
        (
            "SubagentStart",
            EventPayload::SubagentStart {
                subagent_type: "explore".into(),
            },
        ),
        (
            "SessionStart",
            EventPayload::SessionStart { first_turn: true },
        ),
        (
            "SessionEnd",
            EventPayload::SessionEnd {
                reason: "other".into(),
                duration_ms: 1,
            },
        ),
    ];
    for (e, p) in &cases {
        let o = read(e, p, 2, "", "heads up\n");
        let out = clean(&o);
        assert_eq!(out.decision, None, "{e}");
        assert!(out.halt.is_none() && out.queue_message.is_none(), "{e}");
        assert_eq!(out.user_message.as_deref(), Some("heads up"), "{e}");
        let o = read(e, p, 1, "", "");
        assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::Exit, "{e}");
    }
    let ctx_json = |e: &str| {
        format!(
            r#"{{"hookSpecificOutput": {{"hookEventName": "{e}", "additionalContext": "ctx"}}}}"#
        )
    };
    let (e, p) = &cases[0];
    assert_eq!(
        clean(&read(e, p, 0, &ctx_json(e), ""))
            .inject_context
            .as_deref(),
        Some("ctx")
    );
    let o = read(e, p, 0, "nope", "");
    assert!(
        o.failure.is_none() && o.outcome.is_empty(),
        "plain text on SubagentStart is ignored"
    );
    assert_eq!(
        read(e, p, 0, "{nope", "").failure.as_ref().unwrap().kind,
        FailureKind::InvalidJson
    );
    let (e, p) = &cases[1];
    assert_eq!(
        clean(&read(e, p, 0, &ctx_json(e), ""))
            .inject_context
            .as_deref(),
        Some("ctx")
    );
    // Plain stdout on SessionStart is context for the conversation.
    let o = read(e, p, 0, "Project rules: use tabs", "");
    assert_eq!(
        clean(&o).inject_context.as_deref(),
        Some("Project rules: use tabs")
    );
    // SessionEnd output is discarded.
    let (e, p) = &cases[2];
    assert!(
        clean(&read(
            e,
            p,
            0,
            r#"{"decision": "block", "systemMessage": "x"}"#,
            ""
        ))
        .is_empty()
    );
}

#[test]
fn pre_compact_blocks_and_notification_ignores_its_answer() {
    let pc = EventPayload::PreCompact({
        let mut compaction = Compaction::default();
        compaction.trigger = "auto".into();
        compaction
    });
    let o = read("PreCompact", &pc, 2, "", "snapshot failed\n");
    assert_eq!(clean(&o).decision, Some(Decision::Deny));
    assert_eq!(o.outcome.user_message.as_deref(), Some("snapshot failed"));
    let o = read(
        "PreCompact",
        &pc,
        0,
        r#"{"decision": "block", "reason": "save notes first", "continue": false}"#,
        "",
    );
    assert_eq!(clean(&o).decision, Some(Decision::Deny));
    assert!(
        o.outcome.halt.is_none(),
        "continue is discarded on PreCompact"
    );
    assert_eq!(o.outcome.user_message.as_deref(), Some("save notes first"));
    assert!(clean(&read("PreCompact", &pc, 0, "{}", "")).is_empty());

    let n = EventPayload::Notification {
        details: serde_json::Value::Null,
        message: "Claude needs your permission".into(),
        title: None,
        notification_type: "permission_prompt".into(),
    };
    assert!(clean(&read("Notification", &n, 2, "", "ignored")).is_empty());
    assert!(
        clean(&read(
            "Notification",
            &n,
            0,
            r#"{"continue": false, "systemMessage": "x"}"#,
            ""
        ))
        .is_empty()
    );
}

#[test]
fn permission_request_answers() {
    let call = ToolCall::new(
        "run_shell",
        obj(json!({"command": "npm test", "timeout": 5})),
    );
    let p = EventPayload::PermissionRequest(call);
    let allow = r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"command": "npm test --silent"}}}}"#;
    let o = read("PermissionRequest", &p, 0, allow, "");
    let out = clean(&o);
    assert_eq!(out.decision, Some(Decision::Allow));
    assert!(out.replace_input);
    assert_eq!(
        out.updated_input,
        Some(obj(json!({"command": "npm test --silent"})))
    );
    let deny = r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no network in CI", "interrupt": true}}}"#;
    let o = read("PermissionRequest", &p, 0, deny, "");
    let out = clean(&o);
    assert_eq!(out.decision, Some(Decision::Deny));
    assert_eq!(out.agent_message.as_deref(), Some("no network in CI"));
    assert_eq!(out.halt.as_ref().unwrap().reason, "no network in CI");
    // Exit 2 is not honoured here: the user is asked as usual.
    assert!(clean(&read("PermissionRequest", &p, 2, "", "nope")).is_empty());
    let o = read(
        "PermissionRequest",
        &p,
        0,
        r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "maybe"}}}"#,
        "",
    );
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
}

#[test]
fn pre_tool_use_reading_through_the_adapter() {
    let call = EventPayload::ToolGate(ToolCall::new(
        "str_replace",
        obj(json!({"path": "a.rs", "old_str": "x", "new_str": "y"})),
    ));
    let o = read(
        "PreToolUse",
        &call,
        0,
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"file_path": "/w/a.rs", "new_string": "z", "replace_all": true}}}"#,
        "",
    );
    assert_eq!(
        clean(&o).updated_input,
        Some(obj(
            json!({"path": "/w/a.rs", "new_str": "z", "replace_all": true})
        ))
    );
    // `updatedInput` is ignored on defer.
    let o = read(
        "PreToolUse",
        &call,
        0,
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer", "updatedInput": {"file_path": "/x"}}}"#,
        "",
    );
    assert_eq!(clean(&o).decision, Some(Decision::Ask));
    assert_eq!(o.outcome.updated_input, None);
    // A non-string permissionDecision is invalid.
    let o = read(
        "PreToolUse",
        &call,
        0,
        r#"{"hookSpecificOutput": {"permissionDecision": 1}}"#,
        "",
    );
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
    // Exit 2 prefers the JSON's own blocking reason over stderr.
    let o = read(
        "PreToolUse",
        &call,
        2,
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "from json"}}"#,
        "from stderr",
    );
    assert_eq!(clean(&o).decision, Some(Decision::Deny));
    assert_eq!(o.outcome.agent_message.as_deref(), Some("from json"));
    // Killed by a signal: a failure.
    let hook = spec("PreToolUse", None);
    let o = Claude.interpret(
        &hook,
        &call,
        &ProcessResult {
            exit_code: None,
            signal: Some(9),
            stdout: b"",
            stderr: b"",
        },
    );
    assert_eq!(o.failure.as_ref().unwrap().kind, FailureKind::Exit);
}

#[test]
fn every_spec_fails_closed_with_vendor_defaults() {
    let parsed = parse_user(json!({
        "PreToolUse": [group(Some("Bash"), &[": a", ": b"]), group(None, &[": c"])],
        "UserPromptSubmit": [group(None, &[": d"])],
    }));
    assert!(parsed.warnings.is_empty());
    let summary: Vec<_> = parsed
        .hooks
        .iter()
        .map(|h| {
            (
                h.event.as_str(),
                h.command.as_str(),
                h.entry,
                h.timeout.as_secs(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("PreToolUse", ": a", 1, 600),
            ("PreToolUse", ": b", 1, 600),
            ("PreToolUse", ": c", 2, 600),
            ("UserPromptSubmit", ": d", 1, 30),
        ]
    );
    for h in &parsed.hooks {
        assert_eq!(h.dialect, Dialect::Claude);
        assert_eq!(h.policy, FailurePolicy::Closed);
        assert!(h.sandbox);
        assert_eq!(h.scope, Scope::User);
    }
}

// ---------------------------------------------------------------------------------
// Published hooks: scripts that behave like the ones people ship
// ---------------------------------------------------------------------------------

#[test]
fn plain_text_context_on_user_prompt_submit_is_added_not_a_halt() {
    let fx = Fx::new();
    let hook = fx.script(
        "home/.claude/hooks/branch.sh",
        "cat >/dev/null\necho \"Current branch: main\"\necho \"Today: Monday\"",
    );
    fx.claude_user(json!({"UserPromptSubmit": [group(None, &[&hook])]}));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::BeforeSubmitPrompt {
        prompt: "fix it".into(),
    }));
    assert!(v.halt.is_none(), "plain stdout is context, not a failure");
    assert_eq!(
        v.inject_context.as_deref(),
        Some("Current branch: main\nToday: Monday")
    );
    assert!(v.runs[0].failure.is_none());
}

#[test]
fn a_status_line_on_pre_tool_use_is_ignored_not_a_deny() {
    let fx = Fx::new();
    let hook = fx.script(
        "home/.claude/hooks/log.sh",
        "cat >/dev/null\necho \"[hook] checked the command\"",
    );
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&hook])]}));
    let v = bash(&fx.session(), "cargo test");
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert!(v.runs[0].failure.is_none());
    assert_eq!(
        v.inject_context, None,
        "plain text on PreToolUse is not context"
    );
}

#[test]
fn session_start_context_reaches_the_verdict_plain_and_json() {
    let fx = Fx::new();
    let plain = fx.script(
        "home/.claude/hooks/rules.sh",
        "cat >/dev/null\nprintf 'Project rules: tabs, no unwrap.\\n'",
    );
    let json_hook = answer(json!({"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "You are in explanatory output style."
    }}));
    fx.claude_user(json!({"SessionStart": [group(None, &[&plain, &json_hook])]}));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::SessionStart { first_turn: true }));
    assert_eq!(
        v.inject_context.as_deref(),
        Some("Project rules: tabs, no unwrap.\n\nYou are in explanatory output style.")
    );
    assert_eq!(v.runs.len(), 2);
}

#[test]
fn events_claude_cannot_block_never_block_on_failure() {
    let fx = Fx::new();
    fx.claude_user(json!({
        "SubagentStart": [group(None, &["cat >/dev/null; echo crashed >&2; exit 1", "echo not json"])],
    }));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::SubagentStart {
        subagent_type: "explore".into(),
    }));
    assert_eq!(
        v.effective_decision(),
        Decision::Allow,
        "the subagent starts"
    );
    assert!(v.halt.is_none());
    assert_eq!(
        v.runs[0].result,
        RunOutcome::Failed,
        "the failure is recorded"
    );
    assert_eq!(v.runs[0].policy, FailurePolicy::Open);
}

#[test]
fn an_answer_printed_before_a_non_zero_exit_is_honoured() {
    let fx = Fx::new();
    let hook = format!("{}; exit 1", pre_tool("deny", "rm -rf is not allowed"));
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&hook])]}));
    let v = bash(&fx.session(), "rm -rf /");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("rm -rf is not allowed"));
    assert!(v.runs[0].failure.is_none());
}

#[test]
fn failure_policy_setting_restores_claude_fail_open() {
    let fx = Fx::new();
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &["echo oops >&2; exit 1"])]}));
    // Default: the host policy denies a gated action whose hook failed.
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert!(fx.engine().list().hooks[0].fail_closed);

    let engine = fx.engine_with(|c| c.failure_policy("claude", FailurePolicy::Open));
    let v = bash(&engine.session(SessionIdentity::new("c")), "ls");
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.runs[0].policy, FailurePolicy::Open);
    let listing = engine.list();
    assert!(
        !listing.hooks[0].fail_closed,
        "list shows the restored policy"
    );
    assert_eq!(
        listing.failure_policy.get("claude"),
        Some(&FailurePolicy::Open)
    );
}

#[test]
fn a_jq_formatter_reads_tool_response_file_path() {
    let fx = Fx::new();
    let seen = fx.at("formatted.txt");
    let hook = fx.script("home/.claude/hooks/format.sh",
        &format!(
            "f=$(jq -r '.tool_response.filePath // .tool_input.file_path // empty') || exit 5\n[ -n \"$f\" ] && echo \"$f\" >> {seen}"
        ),
    );
    fx.claude_user(json!({"PostToolUse": [group(Some("Write|Edit"), &[&hook])]}));
    let session = fx.session();
    session.fire(EventPayload::AfterToolUse({
        let mut result = ToolResult::new(
            "write_file",
            obj(json!({"path": "src/main.rs", "content": "fn main() {}"})),
            "ok",
        );
        result.is_error = false;
        result.duration_ms = 3;
        result.tool_call_id = "toolu_01".into();
        result.response = None;
        result
    }));
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        format!("{}\n", fx.ws().join("src/main.rs").display())
    );
}

#[test]
fn a_stop_hook_reads_the_transcript_and_the_last_assistant_message() {
    let fx = Fx::new();
    let transcript = fx.write(
        "home/.claude/projects/ws/conv-1.jsonl",
        "{\"type\":\"assistant\",\"message\":\"<promise>DONE</promise>\"}\n",
    );
    let out = fx.at("stop.txt");
    // Like the ralph-loop stop hook: give up quietly when the transcript is missing.
    let hook = fx.script("home/.claude/hooks/stop.sh",
        &format!(
            "input=$(cat)\nt=$(echo \"$input\" | jq -r .transcript_path)\n[ -f \"$t\" ] || exit 0\ngrep -q '<promise>DONE</promise>' \"$t\" && echo found >> {out}\necho \"$input\" | jq -r .last_assistant_message >> {out}"
        ),
    );
    fx.claude_user(json!({"Stop": [group(None, &[&hook])]}));
    let mut identity = SessionIdentity::new("conv-1");
    identity.host.transcript_path = Some(transcript.display().to_string());
    identity.host.permission_mode = Some("acceptEdits".into());
    let session = fx.engine().session(identity);
    session.fire(EventPayload::AfterAgentResponse {
        text: "All tests pass.".into(),
    });
    session.fire(EventPayload::Stop {
        status: "completed".into(),
    });
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "found\nAll tests pass.\n"
    );
}

#[test]
fn a_tracing_hook_pairs_pre_and_post_by_tool_use_id() {
    let fx = Fx::new();
    let log = fx.at("trace.log");
    let hook = fx.script(
        "home/.claude/hooks/trace.sh",
        &format!(
            "jq -r '[.hook_event_name, .tool_use_id, .permission_mode] | join(\" \")' >> {log}"
        ),
    );
    fx.claude_user(json!({
        "PreToolUse": [group(None, &[&hook])],
        "PostToolUse": [group(None, &[&hook])],
    }));
    let mut identity = SessionIdentity::new("c");
    identity.host.permission_mode = Some("plan".into());
    let session = fx.engine().session(identity);
    let call = ToolCall::new("run_shell", obj(json!({"command": "ls"})));
    let id = call.tool_use_id.clone();
    assert!(
        id.starts_with("toolu_"),
        "a tool use id is never missing: {id}"
    );
    session.gate_tool(call);
    session.fire(EventPayload::AfterToolUse({
        let mut result = ToolResult::new("run_shell", obj(json!({"command": "ls"})), "a\nb\n");
        result.is_error = false;
        result.duration_ms = 1;
        result.tool_call_id = id.clone();
        result.response = None;
        result
    }));
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("PreToolUse {id} plan\nPostToolUse {id} plan\n")
    );
}

#[test]
fn subagent_events_carry_agent_id_and_transcript() {
    let fx = Fx::new();
    let out = fx.at("agents.txt");
    let hook = format!(
        "jq -r '[.hook_event_name, .agent_id, .agent_type, (.agent_transcript_path // \"-\")] | join(\" \")' >> {out}"
    );
    fx.claude_user(json!({
        "SubagentStart": [group(None, &[&hook])],
        "SubagentStop": [group(None, &[&hook])],
    }));
    let mut identity = SessionIdentity::new("c");
    identity.host.agent_id = Some("agent-42".into());
    identity.host.agent_transcript_path = Some("/t/agent-42.jsonl".into());
    let session = fx.engine().session(identity);
    session.fire(EventPayload::SubagentStart {
        subagent_type: "Explore".into(),
    });
    session.fire(EventPayload::SubagentStop {
        subagent_type: "Explore".into(),
        status: "completed".into(),
    });
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "SubagentStart agent-42 Explore -\nSubagentStop agent-42 Explore /t/agent-42.jsonl\n"
    );
}

#[test]
fn an_if_guard_runs_only_on_matching_calls() {
    let fx = Fx::new();
    // Like the security-guidance plugin: a guard limited by `if`.
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash|Edit|Write", "hooks": [
        {"type": "command", "if": "Bash(git push:*)", "command": "echo 'push needs review' >&2; exit 2"},
        {"type": "command", "if": "Edit(src/**)", "command": "echo 'src is frozen' >&2; exit 2"},
        {"type": "command", "if": "Read(./.env)", "command": "echo 'never' >&2; exit 2"},
    ]}]}));
    let session = fx.session();
    let v = bash(&session, "cd repo && git push origin main");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("push needs review"));
    assert_eq!(v.runs.len(), 1, "only the matching guard spawned");
    let v = bash(&session, "git status");
    assert!(v.runs.is_empty(), "no guard applies");
    let v = gate(
        &session,
        "str_replace",
        json!({"path": "src/lib.rs", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(v.agent_message.as_deref(), Some("src is frozen"));
    let v = gate(
        &session,
        "str_replace",
        json!({"path": "docs/a.md", "old_string": "a", "new_string": "b"}),
    );
    assert!(v.runs.is_empty());
}

#[test]
fn matcher_lists_with_commas_spaces_and_hyphens_fire() {
    let fx = Fx::new();
    fx.claude_user(json!({
        "PreToolUse": [group(Some("Edit, Write"), &[": edit-or-write"])],
        "SubagentStart": [group(Some("code-reviewer"), &[": reviewer"])],
    }));
    let session = fx.session();
    let v = gate(
        &session,
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
    );
    assert_eq!(commands(&v), [": edit-or-write"]);
    let v = verdict(session.fire(EventPayload::SubagentStart {
        subagent_type: "code-reviewer".into(),
    }));
    assert_eq!(commands(&v), [": reviewer"]);
    let v = verdict(session.fire(EventPayload::SubagentStart {
        subagent_type: "code".into(),
    }));
    assert!(
        v.runs.is_empty(),
        "a hyphenated name is exact, not a substring"
    );
}

#[test]
fn identical_handlers_across_settings_files_run_once() {
    let fx = Fx::new();
    let log = fx.at("runs.log");
    let hook = format!("echo run >> {log}");
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&hook])]}));
    fx.claude_project(json!({"PreToolUse": [group(Some("Bash"), &[&hook])]}));
    fx.claude_local(json!({"PreToolUse": [group(None, &[&hook])]}));
    let v = bash(&fx.trusted_session(), "ls");
    assert_eq!(v.runs.len(), 1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "run\n");
}

#[test]
fn disable_all_hooks_follows_precedence() {
    let fx = Fx::new();
    let doc = |disable: Option<bool>, hook: &str| {
        let mut d = json!({"hooks": {"PreToolUse": [group(None, &[hook])]}});
        if let Some(b) = disable {
            d["disableAllHooks"] = json!(b);
        }
        serde_json::to_string(&d).unwrap()
    };
    fx.write("home/.claude/settings.json", &doc(Some(true), ": user"));
    fx.write("ws/.claude/settings.json", &doc(None, ": project"));
    let v = bash(&fx.trusted_session(), "ls");
    assert!(
        v.runs.is_empty(),
        "user disableAllHooks turns every Claude hook off"
    );
    assert!(fx.trusted_engine().list().hooks.iter().all(|h| !h.active));
    // A project `false` overrides a user `true`.
    fx.write("ws/.claude/settings.json", &doc(Some(false), ": project"));
    let v = bash(&fx.trusted_session(), "ls");
    assert_eq!(commands(&v), [": user", ": project"]);
}

#[test]
fn continue_false_halts_the_run_on_every_event() {
    let fx = Fx::new();
    let stop = answer(json!({"continue": false, "stopReason": "Budget exhausted"}));
    fx.claude_user(json!({
        "PreToolUse": [group(None, &[&stop])],
        "UserPromptSubmit": [group(None, &[&stop])],
    }));
    let session = fx.session();
    let v = bash(&session, "ls");
    assert_eq!(
        v.halt.as_ref().map(|h| h.reason.as_str()),
        Some("Budget exhausted")
    );
    assert_eq!(v.user_message.as_deref(), Some("Budget exhausted"));
    assert_eq!(v.agent_message, None, "the reason is for the user");
    let v = verdict(session.fire(EventPayload::BeforeSubmitPrompt {
        prompt: "go".into(),
    }));
    assert_eq!(
        v.halt.as_ref().map(|h| h.reason.as_str()),
        Some("Budget exhausted")
    );
}

#[test]
fn updated_input_replaces_the_whole_input() {
    let fx = Fx::new();
    let hook = answer(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "ls -la"},
    }}));
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&hook])]}));
    let v = gate(
        &fx.session(),
        "run_shell",
        json!({"command": "ls", "timeout": 5}),
    );
    assert!(v.input_replaced);
    assert_eq!(v.updated_input, Some(obj(json!({"command": "ls -la"}))));
}

#[test]
fn async_hooks_run_detached_and_cannot_block() {
    let fx = Fx::new();
    let marker = fx.at("async.done");
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "async": true, "command": format!("sleep 0.2; touch {marker}; echo no >&2; exit 2")},
        {"type": "command", "asyncRewake": true, "command": "cat >/dev/null; echo 'security review: found a secret' >&2; exit 2"},
    ]}]}));
    let session = fx.session();
    let v = bash(&session, "ls");
    assert_eq!(
        v.effective_decision(),
        Decision::Allow,
        "async hooks cannot block"
    );
    assert!(v.runs.is_empty());
    session.wait_idle();
    assert!(Path::new(&marker).exists(), "the async hook ran");
    let queued: Vec<String> = session.queue().into_iter().map(|m| m.text).collect();
    assert_eq!(
        queued,
        ["security review: found a secret"],
        "asyncRewake wakes the agent"
    );
}

#[test]
fn session_start_hooks_write_claude_env_file_for_later_tool_commands() {
    let fx = Fx::new();
    let hook = fx.script("home/.claude/hooks/env.sh",
        "cat >/dev/null\n[ -n \"$CLAUDE_ENV_FILE\" ] || exit 1\necho 'export JAVA_HOME=/opt/jdk' >> \"$CLAUDE_ENV_FILE\"\necho 'export PATH=\"$JAVA_HOME/bin:$PATH\"' >> \"$CLAUDE_ENV_FILE\"",
    );
    let probe = fx.at("probe.txt");
    fx.claude_user(json!({
        "SessionStart": [group(None, &[&hook])],
        "PreToolUse": [group(None, &[&format!("echo \"${{CLAUDE_ENV_FILE:-unset}}\" > {probe}")])],
    }));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::SessionStart { first_turn: true }));
    let expected = "export JAVA_HOME=/opt/jdk\nexport PATH=\"$JAVA_HOME/bin:$PATH\"\n";
    assert_eq!(v.tool_env_script.as_deref(), Some(expected));
    assert_eq!(session.tool_env_script(), expected);
    // Only SessionStart hooks get the file.
    bash(&session, "ls");
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), "unset\n");
}

#[test]
fn stop_follow_ups_are_held_unless_the_host_continues_automatically() {
    let fx = Fx::new();
    let hook = answer(json!({"decision": "block", "reason": "tests still fail: keep going"}));
    fx.claude_user(json!({"Stop": [group(None, &[&hook])]}));
    let stop = || EventPayload::Stop {
        status: "completed".into(),
    };
    let session = fx.session();
    session.fire(stop());
    session.wait_idle();
    assert!(session.queue()[0].held, "held for a human by default");
    assert!(session.drain_queue().is_empty());

    let session = fx
        .engine_with(|c| c.auto_continue_follow_ups(true))
        .session(SessionIdentity::new("c"));
    session.start_human_turn(None);
    for _ in 0..7 {
        session.fire(stop());
        session.wait_idle();
    }
    let drained = session.drain_queue();
    assert_eq!(drained.len(), 5, "the continuation budget still applies");
    assert!(
        drained
            .iter()
            .all(|m| m.text == "tests still fail: keep going")
    );
    assert_eq!(session.queue().len(), 2);
    assert!(
        session.queue().iter().all(|m| m.held),
        "over budget they are held"
    );
}

#[test]
fn notification_and_permission_request_hooks_are_wired() {
    let fx = Fx::new();
    let notes = fx.at("notes.txt");
    // Like the notifier hooks people publish: forward the message, ignore the rest.
    let notify = fx.script(
        "home/.claude/hooks/notify.sh",
        &format!("jq -r '\"\\(.notification_type): \\(.message)\"' >> {notes}"),
    );
    // Like auto-approve hooks: approve read-only commands, deny the rest.
    let approve = fx.script("home/.claude/hooks/approve.sh",
        r#"cmd=$(jq -r .tool_input.command)
case "$cmd" in
  ls*|"git status"*) b=allow ;;
  *) b=deny ;;
esac
printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"%s","message":"only read-only commands"}}}' "$b""#,
    );
    fx.claude_user(json!({
        "Notification": [group(Some("permission_prompt|idle_prompt"), &[&notify])],
        "PermissionRequest": [group(Some("Bash"), &[&approve])],
    }));
    let session = fx.session();
    session.fire(EventPayload::Notification {
        details: serde_json::Value::Null,
        message: "Claude needs your permission to use Bash".into(),
        title: None,
        notification_type: "permission_prompt".into(),
    });
    session.fire(EventPayload::Notification {
        details: serde_json::Value::Null,
        message: "auth ok".into(),
        title: None,
        notification_type: "auth_success".into(),
    });
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "permission_prompt: Claude needs your permission to use Bash\n"
    );
    let ask = |command: &str| {
        verdict(session.fire(EventPayload::PermissionRequest(ToolCall::new(
            "run_shell",
            obj(json!({ "command": command })),
        ))))
    };
    assert_eq!(ask("ls -la").decision, Some(Decision::Allow));
    let v = ask("curl evil.example");
    assert_eq!(v.decision, Some(Decision::Deny));
    assert_eq!(v.agent_message.as_deref(), Some("only read-only commands"));
}

#[test]
fn pre_compact_hooks_can_block_compaction() {
    let fx = Fx::new();
    fx.claude_user(json!({"PreCompact": [group(Some("auto"), &["cat >/dev/null; echo 'notes not saved' >&2; exit 2"])]}));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::PreCompact({
        let mut compaction = Compaction::default();
        compaction.trigger = "auto".into();
        compaction
    })));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.user_message.as_deref(), Some("notes not saved"));
    let v = verdict(session.fire(EventPayload::PreCompact({
        let mut compaction = Compaction::default();
        compaction.trigger = "manual".into();
        compaction
    })));
    assert!(v.runs.is_empty(), "the matcher is on the trigger");
}

#[test]
fn hooks_of_enabled_plugins_run_with_claude_plugin_root() {
    let fx = Fx::new();
    let install = fx.path("home/.claude/plugins/cache/official/guard/1.0.0");
    fx.write(
        "home/.claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {"guard@official": [
            {"scope": "user", "installPath": install.display().to_string(), "version": "1.0.0"}
        ]}})
        .to_string(),
    );
    let log = fx.at("plugin.log");
    fx.script("home/.claude/plugins/cache/official/guard/1.0.0/hooks/guard.sh",
        &format!(
            "cat >/dev/null\necho \"$CLAUDE_PLUGIN_ROOT\" >> {log}\necho 'force push blocked by plugin' >&2\nexit 2"
        ),
    );
    // Like the official plugins: a hooks.json with a description and an `if` guard.
    fx.write(
        "home/.claude/plugins/cache/official/guard/1.0.0/hooks/hooks.json",
        &json!({"description": "Guards pushes", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "if": "Bash(git push:*)", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}
        ]}]}})
        .to_string(),
    );
    // Not enabled: nothing runs.
    fx.claude_user(json!({}));
    assert!(bash(&fx.trusted_session(), "git push -f").runs.is_empty());

    // Enabled by the project's settings: runs only when the project is trusted.
    fx.write(
        "ws/.claude/settings.json",
        &json!({"enabledPlugins": {"guard@official": true}}).to_string(),
    );
    assert!(
        bash(&fx.session(), "git push -f").runs.is_empty(),
        "an untrusted project enables nothing"
    );
    let session = fx.trusted_session();
    let v = bash(&session, "git push -f");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(
        v.agent_message.as_deref(),
        Some("force push blocked by plugin")
    );
    assert_eq!(
        v.runs[0].command,
        format!("{}/hooks/guard.sh", install.display())
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{}\n", install.display())
    );
    assert!(
        bash(&session, "git status").runs.is_empty(),
        "the `if` applies"
    );
    let listing = fx.trusted_engine().list();
    assert!(
        listing
            .hooks
            .iter()
            .any(|h| h.source == install.join("hooks/hooks.json") && h.active)
    );

    // A local `false` overrides the project's `true`.
    fx.write(
        "ws/.claude/settings.local.json",
        &json!({"enabledPlugins": {"guard@official": false}}).to_string(),
    );
    assert!(bash(&fx.trusted_session(), "git push -f").runs.is_empty());
}

#[test]
fn continue_false_on_a_detached_event_is_handed_to_the_host() {
    let fx = Fx::new();
    let stop = answer(json!({"continue": false, "stopReason": "Tests were deleted; stopping."}));
    fx.claude_user(json!({"PostToolUse": [group(None, &[&stop])]}));
    let session = fx.session();
    assert!(session.take_halt().is_none());
    session.fire(EventPayload::AfterToolUse({
        let mut result = ToolResult::new(
            "run_shell",
            obj(json!({"command": "rm -r tests"})),
            String::new(),
        );
        result.is_error = false;
        result.duration_ms = 1;
        result.tool_call_id = "toolu_9".into();
        result.response = None;
        result
    }));
    session.wait_idle();
    assert_eq!(
        session.take_halt().map(|h| h.reason),
        Some("Tests were deleted; stopping.".to_string())
    );
    assert!(session.take_halt().is_none(), "taken once");
}

#[test]
fn stop_hook_active_once_a_follow_up_continued_the_turn() {
    let fx = Fx::new();
    let log = fx.at("active.log");
    // Like loop-until-done hooks: block once, then let it stop when already active.
    let hook = fx.script("home/.claude/hooks/loop.sh",
        &format!(
            "active=$(jq -r .stop_hook_active)\necho $active >> {log}\n[ \"$active\" = true ] && exit 0\necho 'keep going' >&2\nexit 2"
        ),
    );
    fx.claude_user(json!({"Stop": [group(None, &[&hook])]}));
    let session = fx
        .engine_with(|c| c.auto_continue_follow_ups(true))
        .session(SessionIdentity::new("c"));
    session.start_human_turn(None);
    let stop = || EventPayload::Stop {
        status: "completed".into(),
    };
    session.fire(stop());
    session.wait_idle();
    assert_eq!(session.drain_queue().len(), 1, "the follow-up continues");
    session.fire(stop());
    session.wait_idle();
    assert!(session.drain_queue().is_empty(), "the hook let it stop");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "false\ntrue\n");
    // A human turn resets it.
    session.start_human_turn(None);
    session.fire(stop());
    session.wait_idle();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "false\ntrue\nfalse\n"
    );
}

/// Like a plugin that keeps state across updates (a counter of blocked pushes): it
/// writes under `$CLAUDE_PLUGIN_DATA` and names `${CLAUDE_PLUGIN_DATA}` in its
/// command. The directory is `~/.claude/plugins/data/<id with @ as ->/`, created
/// before the hook runs.
#[test]
fn plugin_hooks_get_a_persistent_claude_plugin_data_directory() {
    let fx = Fx::new();
    let install = fx.path("home/.claude/plugins/cache/official/counter/2.0.0");
    fx.write(
        "home/.claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {"counter@official": [
            {"scope": "user", "installPath": install.display().to_string(), "version": "2.0.0"}
        ]}})
        .to_string(),
    );
    fx.script("home/.claude/plugins/cache/official/counter/2.0.0/hooks/count.sh",
        "cat >/dev/null\nn=$(cat \"$CLAUDE_PLUGIN_DATA/count\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$CLAUDE_PLUGIN_DATA/count\"\necho \"$1\" >> \"$CLAUDE_PLUGIN_DATA/args\"",
    );
    fx.write(
        "home/.claude/plugins/cache/official/counter/2.0.0/hooks/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/count.sh ${CLAUDE_PLUGIN_DATA}"}
        ]}]}})
        .to_string(),
    );
    fx.claude_user(json!({}));
    fx.write(
        "home/.claude/settings.json",
        &json!({"enabledPlugins": {"counter@official": true}}).to_string(),
    );
    let session = fx.trusted_session();
    for _ in 0..2 {
        let v = bash(&session, "git status");
        assert_eq!(v.runs.len(), 1, "{:?}", v.runs);
        assert!(v.runs[0].failure.is_none(), "{:?}", v.runs[0]);
        assert_eq!(v.effective_decision(), Decision::Allow);
    }
    let data = fx.path("home/.claude/plugins/data/counter-official");
    assert_eq!(std::fs::read_to_string(data.join("count")).unwrap(), "2\n");
    assert_eq!(
        std::fs::read_to_string(data.join("args")).unwrap(),
        format!("{0}\n{0}\n", data.display())
    );
}

/// Like "always allow read-only git" hooks: a PermissionRequest hook that allows
/// and sends `updatedPermissions` (an `addRules` for the session) hands the rule
/// updates to the host with the verdict; one whose call another hook denies hands
/// over nothing.
#[test]
fn permission_request_updated_permissions_reach_the_host() {
    let fx = Fx::new();
    let hook = fx.script("home/.claude/hooks/git-readonly.sh",
        r#"cmd=$(jq -r '.tool_input.command')
case "$cmd" in
  "git status"*|"git log"*)
    echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git status:*"}],"behavior":"allow","destination":"session"}]}}}' ;;
  *) exit 0 ;;
esac"#,
    );
    let deny = fx.script("home/.claude/hooks/no-log.sh",
        r#"jq -r '.tool_input.command' | grep -q '^git log' && { echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no git log here"}}}'; exit 0; }
exit 0"#,
    );
    fx.claude_user(json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": hook}, {"type": "command", "command": deny}
    ]}]}));
    let session = fx.session();
    let ask = |command: &str| {
        verdict(session.fire(EventPayload::PermissionRequest(ToolCall::new(
            "run_shell",
            obj(json!({ "command": command })),
        ))))
    };
    let v = ask("git status --short");
    assert_eq!(v.decision, Some(Decision::Allow));
    assert_eq!(
        v.updated_permissions,
        Some(vec![
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "git status:*"}], "behavior": "allow", "destination": "session"})
        ])
    );
    let v = ask("git log -1");
    assert_eq!(v.decision, Some(Decision::Deny));
    assert_eq!(
        v.updated_permissions, None,
        "a denied request updates nothing"
    );
    assert_eq!(ask("make").updated_permissions, None);
}

/// Like a published "did the agent finish?" Stop check written as a `prompt` hook,
/// next to an `http` audit hook: the prompt (and agent) hooks cannot run here, and
/// `list` says why — they need a model — instead of dropping them silently; the
/// http hook is supported (its tests are in `http.rs`).
#[test]
fn prompt_and_agent_handlers_are_listed_with_the_reason_they_never_run() {
    let fx = Fx::new();
    fx.claude_user(json!({
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Did the agent finish every task? $ARGUMENTS"}]}],
        "SubagentStop": [{"hooks": [{"type": "agent", "prompt": "Verify the tests pass"}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/audit"}]}]
    }));
    let listing = fx.engine().list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    for (kind, why) in [
        ("prompt", "not supported: needs a model"),
        ("agent", "not supported: needs a model"),
    ] {
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&format!("type \"{kind}\"")) && m.contains(why)),
            "{kind}: {messages:#?}"
        );
    }
    assert!(
        !messages.iter().any(|m| m.contains("type \"http\"")),
        "{messages:#?}"
    );
    assert_eq!(listing.hooks.len(), 3, "listed, not dropped");
    let supported: Vec<&str> = listing
        .hooks
        .iter()
        .filter(|h| h.supported)
        .map(|h| h.command.as_str())
        .collect();
    assert_eq!(supported, ["http: http://127.0.0.1:9/audit"]);
    let session = fx.session();
    let v = bash(&session, "ls");
    assert!(
        v.runs.is_empty(),
        "a PostToolUse hook does not run on the gate"
    );
}

/// An engine whose settings say `"failurePolicy": {"claude": "open"}`.
fn fail_open_engine(fx: &Fx) -> Engine {
    fx.engine_with(|c| c.failure_policy("claude", FailurePolicy::Open))
}

#[test]
fn on_failure_block_fails_closed_and_continue_fails_open_per_handler() {
    let fx = Fx::new();
    let handler = |command: &str, on_failure: Option<&str>, timeout: Option<u64>| {
        let mut h = json!({"type": "command", "command": command});
        if let Some(p) = on_failure {
            h["onFailure"] = json!(p);
        }
        if let Some(t) = timeout {
            h["timeout"] = json!(t);
        }
        h
    };
    let fails = "cat >/dev/null; echo oops >&2; exit 1";
    let hangs = "cat >/dev/null; sleep 30";

    // "block": a hook that exits 1 blocks even where the settings fail open.
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler(fails, Some("block"), None)]}]}));
    let engine = fail_open_engine(&fx);
    let v = bash(&engine.session(SessionIdentity::new("c")), "ls");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.runs[0].policy, FailurePolicy::Closed);
    assert!(engine.list().hooks[0].fail_closed);
    assert!(
        engine.list().warnings.is_empty(),
        "{:?}",
        engine.list().warnings
    );

    // "block": a hook that times out blocks too.
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler(hangs, Some("block"), Some(1))]}]}));
    let started = std::time::Instant::now();
    let v = bash(
        &fail_open_engine(&fx).session(SessionIdentity::new("c")),
        "ls",
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.runs[0].policy, FailurePolicy::Closed);

    // "continue": the failed hook lets the action through under the default
    // (fail-closed) policy; without onFailure the same hook denies.
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler(fails, Some("continue"), None)]}]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.runs[0].policy, FailurePolicy::Open);
    fx.claude_user(
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler(fails, None, None)]}]}),
    );
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.effective_decision(), Decision::Deny, "our default stays");

    // A bad value and "block" where nothing can be blocked are reported.
    fx.claude_user(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [handler(fails, Some("stop"), None)]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [handler(fails, Some("block"), None)]}],
    }));
    let listing = fx.engine().list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        messages.contains(
            &"\"PreToolUse\" group 1 hook 1 \"onFailure\" must be \"block\" or \"continue\", got \"stop\" — using the default policy"
        ),
        "{messages:#?}"
    );
    assert!(
        messages.contains(
            &"\"PostToolUse\" group 1 hook 1 has \"onFailure\": \"block\" on \"PostToolUse\", where a failed hook has no action to block — it fails open"
        ),
        "{messages:#?}"
    );
}
