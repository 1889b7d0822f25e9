//! The Codex dialect end to end: `hooks.json` and `[hooks]` in `config.toml` at the
//! system, user (`$CODEX_HOME`) and project layers and in installed plugins, real
//! hook processes, the engine's verdicts; the adapter's marshalling and its strict
//! reading of Codex's output schema; and one call merging all five dialects.

use std::path::PathBuf;
use std::time::Duration;

use copse_hooks::dialect::codex::{self, Codex};
use copse_hooks::dialect::{
    Adapter, Context, HookMatcher, HookSpec, Interpretation, ProcessResult,
};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, EventPayload, FailureKind, Fired, RunOutcome, Scope,
    Session, SessionIdentity, ToolCall, Verdict,
};
use copse_hooks::{Compaction, ToolResult};
use copse_hooks::{FailurePolicy, QueueRequest};
use serde_json::{Value, json};

use crate::fx::{Fx, answer, group, lit, obj, verdict};

fn bash(session: &Session, command: &str) -> Verdict {
    session.gate_tool(ToolCall::new(
        "run_shell",
        obj(json!({ "command": command })),
    ))
}

// ---------------------------------------------------------------------------------
// Discovery and trust
// ---------------------------------------------------------------------------------

#[test]
fn post_compact_is_recognised_and_unsupported_with_a_reason() {
    let fx = Fx::new();
    fx.codex_user(json!({"PostCompact": [group(None, &[": after"])]}));
    let listing = fx.engine().list();
    let messages: Vec<&str> = listing
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "Codex hook event \"PostCompact\" is recognised by Codex but not supported by copse-hooks (no canonical event after compaction yet) — entries listed, never run"
        ]
    );
    let h = listing
        .hooks
        .iter()
        .find(|h| h.command == ": after")
        .expect("recognised events are listed");
    assert!(!h.supported && h.canonical.is_none(), "{h:?}");
}

#[test]
fn permission_request_hooks_answer_the_approval_prompt() {
    let fx = Fx::new();
    let out = fx.at("permission-stdin.json");
    let guard = format!(
        r#"cat > {out}; case "$(cat {out})" in *curl*) echo '{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"deny","message":"no network"}}}}}}';; *ls*) echo '{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"allow"}}}}}}';; esac"#
    );
    fx.codex_user(json!({"PermissionRequest": [group(Some("Bash"), &[&guard])]}));
    let engine = fx.engine();
    let listing = engine.list();
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    assert_eq!(
        listing.hooks[0].canonical,
        Some(CanonicalEvent::PermissionRequest)
    );
    let session = engine.session(SessionIdentity::new("conv-1"));
    session.start_human_turn(Some("turn-3".into()));
    let ask = |command: &str| {
        verdict(session.fire(EventPayload::PermissionRequest(ToolCall::new(
            "run_shell",
            obj(json!({ "command": command })),
        ))))
    };
    let v = ask("ls -la");
    assert_eq!(v.decision, Some(Decision::Allow));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!(
            r#"{{"session_id":"conv-1","turn_id":"turn-3","transcript_path":null,"cwd":{},"hook_event_name":"PermissionRequest","model":"","permission_mode":"default","tool_name":"Bash","tool_input":{{"command":"ls -la"}}}}"#,
            lit(fx.ws().display().to_string())
        )
    );
    let v = ask("curl evil.example");
    assert_eq!(v.decision, Some(Decision::Deny));
    assert_eq!(v.agent_message.as_deref(), Some("no network"));
    // Quiet: no hook verdict, the normal approval flow goes on.
    let v = ask("git status");
    assert_eq!(v.decision, None);
    assert!(v.runs[0].failure.is_none());
}

#[test]
fn permission_request_answers_outside_codex_schema_fail_the_hook() {
    let call = EventPayload::PermissionRequest(ToolCall::new(
        "run_shell",
        obj(json!({"command": "npm test"})),
    ));
    for bad in [
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"x"}}}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[]}}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","interrupt":true}}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"ask"}}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":"allow"}}"#,
    ] {
        let i = read("PermissionRequest", &call, Some(0), bad, "");
        assert!(i.failure.is_some(), "{bad}");
        assert_eq!(i.outcome.decision, None, "{bad}");
    }
    let i = read("PermissionRequest", &call, Some(2), "", "not now");
    assert_eq!(i.outcome.decision, Some(Decision::Deny));
    assert_eq!(i.outcome.agent_message.as_deref(), Some("not now"));
}

#[test]
fn mcp_tool_handlers_are_warned_about_per_hook_and_never_run() {
    let fx = Fx::new();
    let source = fx.codex_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "mcp_tool", "server": "guard", "tool": "check", "input": {"cmd": "${tool_input.command}"}},
            {"type": "command", "command": "exit 0"},
        ]}]}),
    );
    let want = "\"PreToolUse\" entry 1 hook 1 has type \"mcp_tool\" on \"PreToolUse\": mcp_tool handlers are not supported yet: this hook does not run (copse-hooks does not call MCP tools from hooks; listed only)";
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
    assert!(!mcp.supported || !mcp.active, "{mcp:?}");
    let report = engine.lint(&[source]);
    assert!(
        report.problems.iter().any(|p| p.message.ends_with(
            "hook 1 has type \"mcp_tool\" on \"PreToolUse\": mcp_tool handlers are not supported yet: this hook does not run (copse-hooks does not call MCP tools from hooks; listed only)"
        ) && p.line == Some(4)),
        "{:?}",
        report.problems
    );
    // `server`, `tool` and `input` are Codex's documented mcp_tool keys, not unknown ones.
    assert!(
        !report.problems.iter().any(|p| p.message.contains("nknown")),
        "{:?}",
        report.problems
    );
    // At the gate only the command hook runs.
    let v = bash(&fx.session(), "ls");
    let ran: Vec<&str> = v.runs.iter().map(|r| r.command.as_str()).collect();
    assert_eq!(ran, ["exit 0"]);
}

#[test]
fn user_hooks_json_gets_exact_pre_tool_use_stdin() {
    let fx = Fx::new();
    let out = fx.at("stdin.json");
    let source =
        fx.codex_user(json!({"PreToolUse": [group(Some("Bash"), &[&format!("cat > {out}")])]}));
    let session = fx.session();
    session.start_human_turn(Some("turn-7".into()));
    let v = bash(&session, "git status");
    assert_eq!(v.effective_decision(), Decision::Allow);
    let run = &v.runs[0];
    assert_eq!(run.dialect, Dialect::Codex);
    assert_eq!(run.event, "PreToolUse");
    assert_eq!(run.source, source);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!(
            r#"{{"session_id":"conv-1","turn_id":"turn-7","transcript_path":null,"cwd":{},"hook_event_name":"PreToolUse","model":"","permission_mode":"default","tool_name":"Bash","tool_input":{{"command":"git status"}}}}"#,
            lit(fx.ws().display().to_string())
        )
    );
}

#[test]
fn every_layer_json_and_toml_plugins_and_project_trust() {
    let fx = Fx::new();
    let log = fx.at("layers.log");
    let rec = |tag: &str| format!("echo {tag} >> {log}");
    fx.codex_hooks(
        "etc/codex/hooks.json",
        json!({"PreToolUse": [group(None, &[&rec("system")])]}),
    );
    fx.write(
        "codex-home/config.toml",
        &format!(
            r#"model = "gpt-5"

[features]
hooks = true

[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "{}"
timeout = 30
statusMessage = "checking"
"#,
            rec("user-toml")
        ),
    );
    fx.codex_user(json!({"PreToolUse": [group(None, &[&rec("user-json")])]}));
    fx.write(
        "codex-home/plugins/cache/market/guard/1.0.0/.codex-plugin/plugin.json",
        r#"{"name": "guard"}"#,
    );
    fx.codex_hooks(
        "codex-home/plugins/cache/market/guard/1.0.0/hooks/hooks.json",
        json!({"PreToolUse": [group(None, &[&format!("echo plugin:$(basename $PLUGIN_ROOT):${{PLUGIN_ROOT}} >> {log}")])]}),
    );
    fx.write(
        "ws/.codex/config.toml",
        &format!("[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{}\"\n", rec("project")),
    );
    let sorted = || {
        let mut l: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        l.sort();
        l
    };
    let v = bash(&fx.session(), "ls");
    assert_eq!(
        v.runs.len(),
        4,
        "untrusted project config.toml does not run"
    );
    let lines = sorted();
    assert_eq!(lines[1..], ["system", "user-json", "user-toml"]);
    let plugin_root = fx.at("codex-home/plugins/cache/market/guard/1.0.0");
    assert_eq!(
        lines[0],
        format!("plugin:1.0.0:{plugin_root}"),
        "PLUGIN_ROOT set and substituted"
    );
    let sources: Vec<String> = v
        .runs
        .iter()
        .map(|r| r.source.display().to_string())
        .collect();
    assert!(sources[0].ends_with("etc/codex/hooks.json"));
    assert!(sources[1].ends_with("codex-home/hooks.json"));
    assert!(sources[2].ends_with("codex-home/config.toml"));
    assert!(sources[3].ends_with("hooks/hooks.json"));
    assert_eq!(v.runs[2].result, RunOutcome::None);
    std::fs::remove_file(&log).unwrap();
    let v = bash(&fx.trusted_session(), "ls");
    assert_eq!(v.runs.len(), 5);
    assert_eq!(v.runs[4].scope, Scope::Project);
    let listing = fx.trusted_engine().list();
    let toml_hook = listing
        .hooks
        .iter()
        .find(|h| h.source.ends_with("codex-home/config.toml"))
        .unwrap();
    assert_eq!(toml_hook.timeout_ms, 30_000, "Codex timeouts are seconds");
    assert_eq!(toml_hook.matcher.as_deref(), Some("Bash"));
}

#[test]
fn features_hooks_false_and_hook_state_switch_hooks_off() {
    let fx = Fx::new();
    let user_json = fx.codex_user(json!({"PreToolUse": [group(None, &["true", "exit 2"])]}));
    let key = format!("{}:pre_tool_use:0:1", user_json.display());
    fx.write(
        "codex-home/config.toml",
        &format!("[hooks.state.\"{key}\"]\nenabled = false\n"),
    );
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.runs.len(), 1);
    assert_eq!(v.runs[0].command, "true");
    assert!(
        fx.engine()
            .list()
            .warnings
            .iter()
            .any(|w| w.message.contains("enabled = false"))
    );

    // A project layer's [hooks.state] is ignored, as Codex does.
    let fx = Fx::new();
    let project_json = fx.codex_project(json!({"PreToolUse": [group(None, &["true"])]}));
    fx.write(
        "ws/.codex/config.toml",
        &format!(
            "[hooks.state.\"{}:pre_tool_use:0:0\"]\nenabled = false\n",
            project_json.display()
        ),
    );
    assert_eq!(bash(&fx.trusted_session(), "ls").runs.len(), 1);

    // `[features] hooks = false` turns every Codex hook off.
    let fx = Fx::new();
    fx.codex_user(json!({"PreToolUse": [group(None, &["exit 2"])]}));
    fx.write("codex-home/config.toml", "[features]\nhooks = false\n");
    assert!(bash(&fx.session(), "ls").runs.is_empty());
}

#[test]
fn invalid_toml_and_unknown_events_are_reported_with_positions() {
    let fx = Fx::new();
    let path = fx.write("ws/.codex/config.toml", "[hooks\nPreToolUse = 1\n");
    let report = fx.engine().lint(&[path]);
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].line, Some(1));
    assert!(report.problems[0].message.starts_with("not valid TOML"));

    let path = fx.write(
        "ws/.codex/config.toml",
        "model = \"x\"\n\n[[hooks.BeforeTool]]\n[[hooks.BeforeTool.hooks]]\ntype = \"command\"\ncommand = \"true\"\n\n[[hooks.PreToolUse]]\nmatcher = \"[\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"true\"\n",
    );
    let report = fx.engine().lint(&[path]);
    let msgs: Vec<(Option<usize>, &str)> = report
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert!(
        msgs.iter().any(|(l, m)| *l == Some(3)
            && m.contains("Unknown Codex hook event \"BeforeTool\"")
            && m.contains("did you mean PreToolUse?")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|(l, m)| *l == Some(8) && m.contains("not a valid regex")),
        "{msgs:?}"
    );
    assert_eq!(report.files[0].1, Dialect::Codex);
}

// ---------------------------------------------------------------------------------
// Matchers, stdin
// ---------------------------------------------------------------------------------

fn spec(event: &str, matcher: Option<&str>) -> HookSpec {
    HookSpec {
        options: Default::default(),
        dialect: Dialect::Codex,
        event: event.to_string(),
        canonical: codex::canonical_for(event),
        command: "true".into(),
        matcher_source: matcher.map(str::to_string),
        matcher: codex::parse::compile_matcher(event, matcher.map(|m| json!(m)).as_ref()),
        glob: None,
        policy: FailurePolicy::Closed,
        timeout: Duration::from_secs(600),
        source: PathBuf::from("/h/.codex/hooks.json"),
        scope: Scope::User,
        root: None,
        entry: 1,
        sandbox: true,
        run_async: false,
        network: true,
        loop_limit: None,
    }
}

fn with_ctx<T>(f: impl FnOnce(&Context<'_>) -> T) -> T {
    let session = {
        let mut identity = SessionIdentity::new("01a2379c");
        identity.host = Default::default();
        identity.generation_id = "turn-1".into();
        identity.model = Some(copse_hooks::ModelIdentity {
            model: "gpt-5".into(),
            ..Default::default()
        });
        identity
    };
    let roots = vec![PathBuf::from("/tmp/proj-codex")];
    f(&Context {
        session: &session,
        workspace_roots: &roots,
    })
}

fn applies(event: &str, matcher: Option<&str>, payload: &EventPayload) -> bool {
    with_ctx(|ctx| Codex.applies(&spec(event, matcher), payload, ctx))
}

#[test]
fn matchers_exact_sets_regexes_and_aliases() {
    let gate = |tool: &str| {
        EventPayload::ToolGate(ToolCall::new(
            tool,
            obj(json!({"path": "a", "content": "b"})),
        ))
    };
    assert!(applies("PreToolUse", Some("Bash"), &gate("run_shell")));
    assert!(
        !applies("PreToolUse", Some("Bas"), &gate("run_shell")),
        "exact names are not substrings"
    );
    assert!(
        applies("PreToolUse", Some("^Ba"), &gate("run_shell")),
        "a regex is unanchored"
    );
    assert!(
        applies("PreToolUse", Some("Edit|Write"), &gate("write_file")),
        "apply_patch answers to Write/Edit"
    );
    assert!(applies(
        "PreToolUse",
        Some("apply_patch"),
        &gate("str_replace")
    ));
    assert!(applies(
        "PreToolUse",
        Some("mcp__memory__.*"),
        &gate("mcp__memory__create")
    ));
    assert!(
        !applies("PreToolUse", None, &gate("read_file")),
        "Codex has no read tool"
    );
    assert!(
        !applies("PreToolUse", Some("["), &gate("run_shell")),
        "an invalid regex never fires"
    );
    // Stop, UserPromptSubmit and Interrupt ignore matchers; Interrupt is the aborted stop.
    let stop = |s: &str| EventPayload::Stop { status: s.into() };
    assert!(applies("Stop", Some("never"), &stop("completed")));
    assert!(!applies("Stop", None, &stop("aborted")));
    assert!(applies("Interrupt", None, &stop("aborted")));
    assert!(!applies("Interrupt", None, &stop("completed")));
    assert!(applies(
        "SessionStart",
        Some("startup|resume"),
        &EventPayload::SessionStart { first_turn: false }
    ));
    assert!(!applies(
        "SessionStart",
        Some("clear"),
        &EventPayload::SessionStart { first_turn: true }
    ));
    assert!(matches!(
        codex::parse::compile_matcher("Stop", Some(&json!("["))),
        HookMatcher::Always
    ));
}

fn marshal(event: &str, payload: &EventPayload) -> String {
    with_ctx(|ctx| Codex.marshal(&spec(event, None), payload, ctx).to_string())
}

#[test]
fn stdin_of_every_wired_event_matches_the_real_codex_shapes() {
    let base = r#""session_id":"01a2379c","transcript_path":null,"cwd":"/tmp/proj-codex""#;
    let turn = r#""session_id":"01a2379c","turn_id":"turn-1","transcript_path":null,"cwd":"/tmp/proj-codex""#;
    let mm = r#""model":"gpt-5","permission_mode":"default""#;
    let cases: Vec<(&str, EventPayload, String)> = vec![
        (
            "SessionStart",
            EventPayload::SessionStart { first_turn: true },
            format!(r#"{{{base},"hook_event_name":"SessionStart",{mm},"source":"startup"}}"#),
        ),
        (
            "UserPromptSubmit",
            EventPayload::BeforeSubmitPrompt {
                prompt: "hello".into(),
            },
            format!(r#"{{{turn},"hook_event_name":"UserPromptSubmit",{mm},"prompt":"hello"}}"#),
        ),
        (
            "PostToolUse",
            EventPayload::AfterToolUse({
                let mut result =
                    ToolResult::new("run_shell", obj(json!({"command": "echo hi"})), "hi\n");
                result.response = None;
                result.is_error = false;
                result.duration_ms = 1;
                result.tool_call_id = "call_1".into();
                result
            }),
            format!(
                r#"{{{turn},"hook_event_name":"PostToolUse",{mm},"tool_name":"Bash","tool_input":{{"command":"echo hi"}},"tool_response":"hi\n","tool_use_id":"call_1"}}"#
            ),
        ),
        (
            "Stop",
            EventPayload::Stop {
                status: "completed".into(),
            },
            format!(
                r#"{{{turn},"hook_event_name":"Stop",{mm},"stop_hook_active":false,"last_assistant_message":null}}"#
            ),
        ),
        (
            "SessionEnd",
            EventPayload::SessionEnd {
                reason: "completed".into(),
                duration_ms: 5,
            },
            format!(r#"{{{base},"hook_event_name":"SessionEnd","reason":"other"}}"#),
        ),
        (
            "PreCompact",
            EventPayload::PreCompact({
                let mut compaction = Compaction::default();
                compaction.trigger = "manual".into();
                compaction
            }),
            format!(r#"{{{turn},"hook_event_name":"PreCompact",{mm},"trigger":"manual"}}"#),
        ),
        (
            "Interrupt",
            EventPayload::Stop {
                status: "aborted".into(),
            },
            format!(r#"{{{turn},"hook_event_name":"Interrupt",{mm}}}"#),
        ),
        (
            "SubagentStart",
            EventPayload::SubagentStart {
                subagent_type: "explore".into(),
            },
            format!(
                r#"{{"session_id":"01a2379c","agent_type":"explore","transcript_path":null,"cwd":"/tmp/proj-codex","hook_event_name":"SubagentStart",{mm}}}"#
            ),
        ),
    ];
    for (event, payload, expected) in cases {
        assert_eq!(marshal(event, &payload), expected, "{event}");
    }
    // Writes and edits are apply_patch envelopes relative to the working directory.
    let edit = marshal(
        "PreToolUse",
        &EventPayload::ToolGate(ToolCall::new(
            "write_file",
            obj(json!({"path": "/tmp/proj-codex/src/new.rs", "content": "fn a() {}\n"})),
        )),
    );
    assert!(edit.contains(r#""tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: src/new.rs\n+fn a() {}\n*** End Patch\n"}"#), "{edit}");
}

// ---------------------------------------------------------------------------------
// Output schema and exit codes
// ---------------------------------------------------------------------------------

fn read(
    event: &str,
    payload: &EventPayload,
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Interpretation {
    Codex.interpret(
        &spec(event, None),
        payload,
        &ProcessResult {
            exit_code: code,
            signal: None,
            stdout: stdout.as_bytes(),
            stderr: stderr.as_bytes(),
        },
    )
}

fn gate() -> EventPayload {
    EventPayload::ToolGate(ToolCall::new(
        "run_shell",
        obj(json!({"command": "rm -rf /"})),
    ))
}

#[test]
fn pre_tool_use_honours_only_codex_values() {
    let g = gate();
    let deny = read(
        "PreToolUse",
        &g,
        Some(0),
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"do not run that"}}"#,
        "",
    );
    assert!(deny.failure.is_none());
    assert_eq!(deny.outcome.decision, Some(Decision::Deny));
    assert_eq!(
        deny.outcome.agent_message.as_deref(),
        Some("do not run that")
    );
    let block = read(
        "PreToolUse",
        &g,
        Some(0),
        r#"{"decision":"block","reason":"legacy block"}"#,
        "",
    );
    assert_eq!(block.outcome.decision, Some(Decision::Deny));
    let rewrite = read(
        "PreToolUse",
        &g,
        Some(0),
        r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}"#,
        "",
    );
    assert_eq!(
        rewrite.outcome.updated_input,
        Some(obj(json!({"command": "echo rewritten"})))
    );
    assert_eq!(rewrite.outcome.decision, None, "allow is never an approval");
    // Everything outside Codex's schema is a failed hook: Codex runs the command
    // anyway (fail-open); the host policy here fails closed.
    for bad in [
        r#"{"decision":"deny","reason":"x"}"#,
        r#"{"decision":"deny","hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"x"}}"#,
        r#"{"decision":"approve"}"#,
        r#"{"decision":"block"}"#,
        r#"{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"x"}}"#,
        r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
        r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
        r#"{"hookSpecificOutput":{"updatedInput":{"command":"x"}}}"#,
        r#"{"continue":false,"stopReason":"no"}"#,
        r#"{"suppressOutput":true}"#,
        r#"{"reason":"without decision"}"#,
        r#"{"systemMessage":5}"#,
        r#"{not json"#,
    ] {
        let i = read("PreToolUse", &g, Some(0), bad, "");
        assert_eq!(
            i.failure.as_ref().map(|f| f.kind),
            Some(FailureKind::InvalidJson),
            "{bad}"
        );
    }
    // Plain text on PreToolUse is ignored.
    let i = read("PreToolUse", &g, Some(0), "hello", "");
    assert!(i.failure.is_none() && i.outcome.decision.is_none());

    // End to end: the real-run quirk — top-level "deny" — fails closed here.
    let fx = Fx::new();
    fx.codex_user(json!({"PreToolUse": [group(Some("Bash"), &[&answer(json!({"decision": "deny", "reason": "nope"}))])]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.effective_decision(), Decision::Deny);
}

#[test]
fn exit_codes() {
    let g = gate();
    let i = read("PreToolUse", &g, Some(2), "", "blocked by policy\n");
    assert_eq!(i.outcome.decision, Some(Decision::Deny));
    assert_eq!(
        i.outcome.agent_message.as_deref(),
        Some("blocked by policy")
    );
    let i = read("PreToolUse", &g, Some(2), "", "");
    assert_eq!(
        i.failure.as_ref().unwrap().kind,
        FailureKind::Exit,
        "exit 2 needs a reason on stderr"
    );
    let i = read("PreToolUse", &g, Some(1), "", "x");
    assert_eq!(i.failure.as_ref().unwrap().kind, FailureKind::Exit);
    let i = read("PreToolUse", &g, None, "", "");
    assert!(i.failure.is_some());

    let prompt = EventPayload::BeforeSubmitPrompt { prompt: "p".into() };
    let i = read("UserPromptSubmit", &prompt, Some(2), "", "no secrets");
    assert_eq!(i.outcome.halt.as_ref().unwrap().reason, "no secrets");
    let stop = EventPayload::Stop {
        status: "completed".into(),
    };
    let i = read("Stop", &stop, Some(2), "", "keep going");
    assert_eq!(
        i.outcome.queue_message,
        Some(QueueRequest {
            text: "keep going".into(),
            send_now: false,
            held: true
        })
    );
}

#[test]
fn other_event_channels() {
    let prompt = EventPayload::BeforeSubmitPrompt { prompt: "p".into() };
    let i = read(
        "UserPromptSubmit",
        &prompt,
        Some(0),
        r#"{"decision":"block","reason":"slow down","hookSpecificOutput":{"additionalContext":"ignored"}}"#,
        "",
    );
    assert_eq!(i.outcome.halt.as_ref().unwrap().reason, "slow down");
    let i = read(
        "UserPromptSubmit",
        &prompt,
        Some(0),
        r#"{"continue":false,"stopReason":"pause"}"#,
        "",
    );
    assert_eq!(i.outcome.halt.as_ref().unwrap().reason, "pause");
    let i = read(
        "UserPromptSubmit",
        &prompt,
        Some(0),
        r#"{"decision":"block"}"#,
        "",
    );
    assert!(i.failure.is_some(), "block needs a reason");
    let i = read("UserPromptSubmit", &prompt, Some(0), "plain context", "");
    assert_eq!(i.outcome.inject_context.as_deref(), Some("plain context"));

    let after = EventPayload::AfterToolUse({
        let mut result = ToolResult::new("run_shell", obj(json!({"command": "ls"})), "a");
        result.response = None;
        result.is_error = false;
        result.duration_ms = 1;
        result.tool_call_id = "1".into();
        result
    });
    let i = read(
        "PostToolUse",
        &after,
        Some(0),
        r#"{"decision":"block","reason":"bad output","hookSpecificOutput":{"additionalContext":"ctx"}}"#,
        "",
    );
    assert_eq!(
        i.outcome.queue_message.as_ref().unwrap().text,
        "bad output\n\nctx"
    );
    let i = read(
        "PostToolUse",
        &after,
        Some(0),
        r#"{"reason":"no decision"}"#,
        "",
    );
    assert!(i.failure.is_some());

    let start = EventPayload::SessionStart { first_turn: true };
    let i = read(
        "SessionStart",
        &start,
        Some(0),
        r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"notes"}}"#,
        "",
    );
    assert_eq!(i.outcome.inject_context.as_deref(), Some("notes"));

    let stop = EventPayload::Stop {
        status: "completed".into(),
    };
    let i = read(
        "Stop",
        &stop,
        Some(0),
        r#"{"decision":"block","reason":"tests fail"}"#,
        "",
    );
    assert_eq!(i.outcome.queue_message.as_ref().unwrap().text, "tests fail");
    assert!(i.outcome.queue_message.as_ref().unwrap().held);
}

#[test]
fn timeouts_are_seconds_with_a_cap_on_session_end() {
    let parsed = Codex.parse(
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"a"},{"type":"command","command":"b","timeout":0.5}]}],"SessionEnd":[{"hooks":[{"type":"command","command":"c","timeout":60}]}],"PostCompact":[{"hooks":[{"type":"command","command":"d"}]}]}}"#,
        std::path::Path::new("/h/.codex/hooks.json"),
        Scope::User,
        None,
    );
    let t: Vec<Duration> = parsed.hooks.iter().map(|h| h.timeout).collect();
    assert_eq!(
        t[..3],
        [
            Duration::from_secs(600),
            Duration::from_secs(1),
            Duration::from_secs(3)
        ]
    );
    assert!(
        !parsed.hooks[3].supported(),
        "PostCompact is listed, never run"
    );
    assert!(
        parsed
            .warnings
            .iter()
            .any(|w| w.message.contains("PostCompact") && w.message.contains("after compaction"))
    );
    for e in codex::PUBLISHED_EVENTS {
        assert!(
            codex::canonical_for(e).is_some() != codex::unsupported_reason(e).is_some(),
            "{e}"
        );
    }

    let fx = Fx::new();
    fx.codex_user(json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 5", "timeout": 1}]}]}));
    let v = bash(&fx.session(), "ls");
    assert_eq!(
        v.runs[0].failure.as_ref().unwrap().kind,
        FailureKind::Timeout
    );
    assert_eq!(v.effective_decision(), Decision::Deny);
}

#[test]
fn published_style_python_guard_blocks_rm_rf() {
    // The shape of the hooks published for Codex: a Python script reading the JSON
    // payload and answering with permissionDecision on stdout.
    let fx = Fx::new();
    let script = fx.write(
        "ws/.codex/hooks/pre_tool_use.py",
        r#"import json, sys
payload = json.load(sys.stdin)
command = payload.get("tool_input", {}).get("command", "")
if payload.get("tool_name") == "Bash" and "rm -rf" in command:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "rm -rf is not allowed here"}}))
sys.exit(0)
"#,
    );
    fx.codex_project(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("python3 {}", script.display()), "statusMessage": "Checking Bash"}]}]}),
    );
    let session = fx.trusted_session();
    let v = bash(&session, "rm -rf build");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(
        v.agent_message.as_deref(),
        Some("rm -rf is not allowed here")
    );
    assert_eq!(bash(&session, "ls").effective_decision(), Decision::Allow);
    // Untrusted: never runs.
    assert!(bash(&fx.session(), "rm -rf build").runs.is_empty());
}

// ---------------------------------------------------------------------------------
// All five dialects on one call
// ---------------------------------------------------------------------------------

#[test]
fn cursor_claude_copse_gemini_and_codex_merge_into_one_verdict() {
    let fx = Fx::new();
    fx.cursor_user(json!({"beforeShellExecution": [
        {"command": answer(json!({"permission": "allow"}))}
    ]}));
    fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &[&answer(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "claude asks"}}))])]}));
    fx.copse_user(json!({"toolGate": [{"command": answer(json!({"decision": "allow", "agentMessage": "copse ok"}))}]}));
    fx.gemini_user(json!({"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "g", "type": "command", "command": answer(json!({"decision": "allow", "systemMessage": "gemini saw it"}))}]}]}));
    fx.codex_user(json!({"PreToolUse": [group(Some("Bash"), &["echo codex denies >&2; exit 2"])]}));
    let v = bash(&fx.session(), "git push --force");
    assert_eq!(
        v.runs
            .iter()
            .map(|r| (r.dialect, r.event.as_str(), r.result))
            .collect::<Vec<_>>(),
        vec![
            (Dialect::Cursor, "beforeShellExecution", RunOutcome::Allow),
            (Dialect::Claude, "PreToolUse", RunOutcome::Ask),
            (Dialect::Copse, "toolGate", RunOutcome::Allow),
            (Dialect::Gemini, "BeforeTool", RunOutcome::Allow),
            (Dialect::Codex, "PreToolUse", RunOutcome::Deny),
        ]
    );
    assert_eq!(v.effective_decision(), Decision::Deny, "the strictest wins");
    assert_eq!(
        v.agent_message.as_deref(),
        Some("claude asks\n\ncopse ok\n\ncodex denies")
    );
    assert_eq!(v.user_message.as_deref(), Some("gemini saw it"));
    for r in &v.runs {
        assert_eq!(r.canonical, CanonicalEvent::ToolGate);
    }
}

#[test]
fn detached_codex_events_fire() {
    let fx = Fx::new();
    let out = fx.at("end.json");
    fx.codex_user(json!({"SessionEnd": [group(None, &[&format!("cat > {out}")])]}));
    let session = fx.session();
    let fired = session.fire(EventPayload::SessionEnd {
        reason: "completed".into(),
        duration_ms: 1,
    });
    assert!(matches!(fired, Fired::Detached { dispatched: 1, .. }));
    session.wait_idle();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["hook_event_name"], "SessionEnd");
    assert_eq!(v["reason"], "other");
    assert!(v.get("model").is_none(), "SessionEnd carries no model");
}

#[test]
fn locations_of_gemini_and_codex_layers_in_order() {
    let fx = Fx::new();
    fx.write("home/.gemini/extensions/b-ext/hooks/hooks.json", "{}");
    fx.write("home/.gemini/extensions/a-ext/hooks/hooks.json", "{}");
    fx.write("codex-home/plugins/cache/m/p/2.0.0/hooks/hooks.json", "{}");
    let vendor = copse_hooks::VendorPaths {
        gemini_system_settings: PathBuf::from("/etc/gemini-cli/settings.json"),
        codex_home: fx.path("codex-home"),
        codex_system_dir: PathBuf::from("/etc/codex"),
        ..copse_hooks::VendorPaths::for_home(&fx.home())
    };
    let home = fx.home();
    let got: Vec<(String, Dialect, Scope)> = copse_hooks::config_locations_with(
        &home,
        &home.join(".copse"),
        &[PathBuf::from("/w")],
        &vendor,
    )
    .into_iter()
    .filter(|l| matches!(l.dialect, Dialect::Gemini | Dialect::Codex))
    .map(|l| {
        let p = l
            .path
            .display()
            .to_string()
            .replace(&fx.root().display().to_string(), "$T");
        (p, l.dialect, l.scope)
    })
    .collect();
    let u = Scope::User;
    let p = Scope::Project;
    let (g, c) = (Dialect::Gemini, Dialect::Codex);
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (s("/etc/gemini-cli/settings.json"), g, u),
            (s("$T/home/.gemini/settings.json"), g, u),
            (s("$T/home/.gemini/extensions/a-ext/hooks/hooks.json"), g, u),
            (s("$T/home/.gemini/extensions/b-ext/hooks/hooks.json"), g, u),
            (s("/etc/codex/hooks.json"), c, u),
            (s("/etc/codex/config.toml"), c, u),
            (s("$T/codex-home/hooks.json"), c, u),
            (s("$T/codex-home/config.toml"), c, u),
            (
                s("$T/codex-home/plugins/cache/m/p/2.0.0/hooks/hooks.json"),
                c,
                u
            ),
            (s("/w/.gemini/settings.json"), g, p),
            (s("/w/.codex/hooks.json"), c, p),
            (s("/w/.codex/config.toml"), c, p),
        ]
    );
}

#[test]
fn failure_policy_setting_restores_codex_fail_open() {
    let fx = Fx::new();
    fx.codex_user(json!({"PreToolUse": [group(Some("Bash"), &["echo oops >&2; exit 1"])]}));
    // Default: the host policy denies a gated action whose hook failed.
    let v = bash(&fx.session(), "ls");
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert!(fx.engine().list().hooks[0].fail_closed);

    let configured =
        |dialect: &str| fx.engine_with(|c| c.failure_policy(dialect, FailurePolicy::Open));
    // Another dialect's setting changes nothing here.
    let v = bash(
        &configured("gemini").session(SessionIdentity::new("c")),
        "ls",
    );
    assert_eq!(v.effective_decision(), Decision::Deny);

    let engine = configured("codex");
    let v = bash(&engine.session(SessionIdentity::new("c")), "ls");
    assert_eq!(
        v.runs[0].result,
        RunOutcome::Failed,
        "the failure is recorded"
    );
    assert_eq!(v.runs[0].policy, FailurePolicy::Open);
    assert_eq!(v.effective_decision(), Decision::Allow);
    let listing = engine.list();
    assert!(
        !listing.hooks[0].fail_closed,
        "list shows the restored policy"
    );
    assert_eq!(
        listing.failure_policy.get("codex"),
        Some(&FailurePolicy::Open)
    );
}
