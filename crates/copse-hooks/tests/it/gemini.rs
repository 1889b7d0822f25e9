//! The Gemini CLI dialect end to end: `settings.json` at the system, user and project
//! layers and extension `hooks/hooks.json` in a temp home and workspace, real hook
//! processes, the engine's verdicts; plus the adapter's marshalling and reading of
//! every wired event and output channel.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use copse_hooks::TrustedWorkspace;
use copse_hooks::dialect::gemini::{self, Gemini, marshal::marshal};
use copse_hooks::dialect::{
    Adapter, Context, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, Engine, EventPayload, FailureKind, Fired, Outcome,
    RunOutcome, Scope, Session, SessionIdentity, ToolCall, Verdict,
};
use copse_hooks::{Compaction, ToolResult};
use copse_hooks::{FailurePolicy, QueueRequest};
use serde_json::{Value, json};

use crate::fx::{Fx, answer, lit, obj};

fn shell(session: &Session, command: &str) -> Verdict {
    session.gate_tool(ToolCall::new(
        "run_shell",
        obj(json!({ "command": command })),
    ))
}

/// A named command hook.
fn cmd(name: &str, command: &str) -> Value {
    json!({"name": name, "type": "command", "command": command})
}

/// A definition of named command hooks.
fn def(matcher: Option<&str>, hooks: &[(&str, &str)]) -> Value {
    let hooks: Vec<Value> = hooks.iter().map(|(n, c)| cmd(n, c)).collect();
    match matcher {
        Some(m) => json!({"matcher": m, "hooks": hooks}),
        None => json!({ "hooks": hooks }),
    }
}

/// A Gemini `timestamp`: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn is_iso_millis(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
        && s.chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19, 23].contains(&i) || c.is_ascii_digit())
}

/// The verdict of one user-level BeforeTool hook on `ls`.
fn verdict_of(command: &str) -> Verdict {
    let fx = Fx::new();
    fx.gemini_user(json!({"BeforeTool": [def(Some("run_shell_command"), &[("h", command)])]}));
    let v = shell(&fx.session(), "ls");
    assert_eq!(v.runs.len(), 1, "the hook ran once");
    v
}

// ---------------------------------------------------------------------------------
// Discovery, trust and enablement
// ---------------------------------------------------------------------------------

#[test]
fn user_hook_gets_exact_before_tool_stdin_and_gemini_environment() {
    let fx = Fx::new();
    let out = fx.at("stdin.json");
    let env = fx.at("env.txt");
    let source = fx.gemini_user(json!({"BeforeTool": [def(
        Some("run_shell_command"),
        &[("record", &format!("cat > {out}; env > {env}"))]
    )]}));
    let v = shell(&fx.session(), "git status");
    assert_eq!(v.effective_decision(), Decision::Allow);
    let run = &v.runs[0];
    assert_eq!(run.dialect, Dialect::Gemini);
    assert_eq!(run.event, "BeforeTool");
    assert_eq!(run.canonical, CanonicalEvent::ToolGate);
    assert_eq!(run.scope, Scope::User);
    assert_eq!(run.source, source);

    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ts = stdin["timestamp"].as_str().unwrap().to_string();
    assert!(is_iso_millis(&ts), "timestamp {ts}");
    let expected = format!(
        r#"{{"session_id":"conv-1","transcript_path":"","cwd":{ws},"hook_event_name":"BeforeTool","timestamp":"{ts}","tool_name":"run_shell_command","tool_input":{{"command":"git status"}}}}"#,
        ws = lit(fx.ws().display().to_string())
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);

    let env = std::fs::read_to_string(&env).unwrap();
    let ws = fx.ws().display().to_string();
    for line in [
        format!("GEMINI_PROJECT_DIR={ws}"),
        format!("GEMINI_CWD={ws}"),
        format!("CLAUDE_PROJECT_DIR={ws}"),
        "GEMINI_SESSION_ID=conv-1".to_string(),
    ] {
        assert!(
            env.lines().any(|l| l == line),
            "{line} missing from the hook's env"
        );
    }
}

#[test]
fn every_layer_is_discovered_in_order_and_project_hooks_need_trust() {
    let fx = Fx::new();
    let log = fx.at("order.log");
    let rec = |tag: &str| format!("echo {tag} >> {log}");
    fx.gemini_system(json!({"BeforeTool": [def(None, &[("sys", &rec("system"))])]}));
    fx.gemini_user(json!({"BeforeTool": [def(None, &[("usr", &rec("user"))])]}));
    // An extension: `${extensionPath}` is the extension's directory.
    fx.write(
        "home/.gemini/extensions/guard/gemini-extension.json",
        r#"{"name": "guard", "version": "1.0.0"}"#,
    );
    fx.write(
        "home/.gemini/extensions/guard/hooks/hooks.json",
        &json!({"hooks": {"BeforeTool": [def(None, &[("ext", "sh ${extensionPath}/hooks/guard.sh")])]}})
            .to_string(),
    );
    fx.write(
        "home/.gemini/extensions/guard/hooks/guard.sh",
        &format!("echo extension:$(basename $(dirname $(dirname $0))) >> {log}\n"),
    );
    let project =
        fx.gemini_project(json!({"BeforeTool": [def(None, &[("prj", &rec("project"))])]}));

    // Hooks run in parallel: the log is in completion order, the runs in
    // configured order.
    let logged = || {
        let mut lines: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        lines
    };
    let v = shell(&fx.session(), "ls");
    assert_eq!(v.runs.len(), 3, "the untrusted project layer does not run");
    assert_eq!(logged(), ["extension:guard", "system", "user"]);
    let sources: Vec<String> = v
        .runs
        .iter()
        .map(|r| r.source.display().to_string())
        .collect();
    assert!(
        sources[0].ends_with("etc/gemini-cli/settings.json"),
        "{sources:?}"
    );
    assert!(sources[1].ends_with("home/.gemini/settings.json"));
    assert!(sources[2].ends_with("home/.gemini/extensions/guard/hooks/hooks.json"));
    std::fs::remove_file(&log).unwrap();

    let v = shell(&fx.trusted_session(), "ls");
    assert_eq!(v.runs.len(), 4);
    assert_eq!(v.runs[3].source, project);
    assert_eq!(v.runs[3].scope, Scope::Project);
    assert_eq!(logged(), ["extension:guard", "project", "system", "user"]);
    let ext = &v.runs[2].command;
    assert!(
        ext.starts_with("sh /") && ext.ends_with("/extensions/guard/hooks/guard.sh"),
        "{ext}"
    );
}

#[test]
fn a_pinned_project_config_stops_running_when_it_changes() {
    let fx = Fx::new();
    let out = fx.at("ran");
    let project =
        fx.gemini_project(json!({"BeforeTool": [def(None, &[("p", &format!("touch {out}"))])]}));
    let hash = copse_hooks::sha256_hex(&std::fs::read(&project).unwrap());
    let pinned = |hash: String| {
        fx.engine_with(|c| {
            c.trusted(TrustedWorkspace::Pinned {
                path: fx.ws(),
                configs: BTreeMap::from([(project.clone(), Some(hash))]),
                scripts: None,
            })
        })
        .session(SessionIdentity::new("c"))
    };
    let v = shell(&pinned(hash.clone()), "ls");
    assert_eq!(v.runs.len(), 1);
    assert!(std::path::Path::new(&out).exists());

    // The file changes after it was trusted: its hooks no longer run.
    fx.gemini_project(json!({"BeforeTool": [def(None, &[("p", "exit 2")])]}));
    let session = pinned(hash);
    let v = shell(&session, "ls");
    assert!(v.runs.iter().all(|r| r.blocked), "{:?}", v.runs);
    assert_eq!(
        v.decision,
        Some(copse_hooks::Decision::Deny),
        "a changed guard blocks"
    );
    assert!(session.take_notices().iter().any(|n| {
        n.message
            .contains("changed since the workspace was trusted")
    }),);
}

#[test]
fn hooks_config_enabled_false_and_disabled_switch_hooks_off() {
    let fx = Fx::new();
    fx.gemini_settings(
        "home/.gemini/settings.json",
        json!({"BeforeTool": [{"hooks": [
            cmd("keep", "true"),
            cmd("noisy", "true"),
            {"type": "command", "command": "echo by-command"},
            cmd("named", "echo named"),
        ]}]}),
        json!({"hooksConfig": {"disabled": ["noisy", "echo by-command", "echo named"]}}),
    );
    let v = shell(&fx.session(), "ls");
    let ran: Vec<&str> = v.runs.iter().map(|r| r.command.as_str()).collect();
    assert_eq!(
        ran,
        vec!["true", "echo named"],
        "disabled by name, or by command when the hook has no name"
    );
    let listing = fx.engine().list();
    let active: Vec<bool> = listing.hooks.iter().map(|h| h.active).collect();
    assert_eq!(active, vec![true, false, false, true]);
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.message.contains("entry 1 hook 3 has no \"name\""))
    );
    assert!(listing.warnings.iter().any(|w| {
        w.message
            .contains("\"noisy\" is listed in \"hooksConfig.disabled\"")
    }));

    // The union across layers: a project file can disable a user hook (trusted only).
    let fx = Fx::new();
    fx.gemini_user(json!({"BeforeTool": [def(None, &[("a", "true"), ("b", "true")])]}));
    fx.gemini_settings(
        "ws/.gemini/settings.json",
        json!({}),
        json!({"hooksConfig": {"disabled": ["b"]}}),
    );
    assert_eq!(
        shell(&fx.session(), "ls").runs.len(),
        2,
        "untrusted project cannot switch"
    );
    assert_eq!(shell(&fx.trusted_session(), "ls").runs.len(), 1);

    // `hooksConfig.enabled: false` turns every Gemini hook off, not other dialects'.
    let fx = Fx::new();
    fx.gemini_settings(
        "home/.gemini/settings.json",
        json!({"BeforeTool": [def(None, &[("a", "exit 2")])]}),
        json!({"hooksConfig": {"enabled": false}}),
    );
    fx.claude_user(json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}));
    let v = shell(&fx.session(), "ls");
    assert_eq!(v.runs.len(), 1);
    assert_eq!(v.runs[0].dialect, Dialect::Claude);
    assert!(
        fx.engine()
            .list()
            .hooks
            .iter()
            .any(|h| h.dialect == Dialect::Gemini && !h.active)
    );
}

#[test]
fn duplicates_by_name_and_command_run_once() {
    let fx = Fx::new();
    let log = fx.at("dups.log");
    let c = format!("echo x >> {log}");
    fx.gemini_user(json!({"BeforeTool": [def(None, &[("same", &c), ("other-name", &c)])]}));
    fx.gemini_project(json!({"BeforeTool": [def(None, &[("same", &c)])]}));
    let v = shell(&fx.trusted_session(), "ls");
    assert_eq!(v.runs.len(), 2, "same name:command across layers runs once");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "x\nx\n");
}

// ---------------------------------------------------------------------------------
// Matchers
// ---------------------------------------------------------------------------------

#[test]
fn tool_matchers_are_unanchored_regexes_on_gemini_names() {
    let fx = Fx::new();
    fx.gemini_user(json!({"BeforeTool": [
        def(Some("shell"), &[("substring", "true")]),
        def(Some("^run_shell_command$"), &[("anchored", "true")]),
        def(Some("write_file|replace"), &[("edits", "true")]),
        def(Some("Bash"), &[("claude-name", "true")]),
        def(Some("[invalid"), &[("invalid", "true")]),
        def(Some("^mcp_github_"), &[("mcp", "true")]),
        def(Some("*"), &[("star", "true")]),
    ]}));
    let names = |v: &Verdict| v.runs.len();
    let session = fx.session();
    assert_eq!(
        names(&shell(&session, "ls")),
        3,
        "substring, anchored, star"
    );
    let edit = session.gate_tool(ToolCall::new(
        "str_replace",
        obj(json!({"path": "a.rs", "old_string": "a", "new_string": "b"})),
    ));
    assert_eq!(edit.runs.len(), 2, "edits, star");
    let mcp = session.gate_tool(ToolCall::new(
        "mcp__github__create_issue",
        obj(json!({"title": "t"})),
    ));
    assert_eq!(mcp.runs.len(), 2, "mcp, star");
    let stdin: Value = serde_json::from_slice(&mcp.runs[0].stdin).unwrap();
    assert_eq!(stdin["tool_name"], "mcp_github_create_issue");
    assert_eq!(
        stdin["mcp_context"],
        json!({"server_name": "github", "tool_name": "create_issue"})
    );

    // An invalid regex falls back to exact equality, as Gemini CLI does.
    assert!(
        matches!(gemini::parse::compile_matcher("BeforeTool", Some(&json!("[x"))), HookMatcher::Names(ref n) if n == &["[x".to_string()])
    );
    // Lint points at the Claude tool name and the invalid regex.
    let warnings = fx.engine().list().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("\"Bash\" → \"run_shell_command\"")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("\"[invalid\" is not a valid regex"))
    );
}

#[test]
fn lifecycle_matchers_are_exact_and_other_events_ignore_them() {
    let a = Gemini;
    let parsed = a.parse(
        &json!({"hooks": {
            "SessionStart": [def(Some("startup"), &[("s", "true")]), def(Some("startup|resume"), &[("alt", "true")])],
            "PreCompress": [def(Some("manual"), &[("m", "true")])],
            "BeforeAgent": [def(Some("never-tested"), &[("b", "true")])],
        }})
        .to_string(),
        std::path::Path::new("/h/.gemini/settings.json"),
        Scope::User,
        None,
    );
    let fires = |event: &str, payload: &EventPayload| -> Vec<String> {
        let session = SessionIdentity::new("c");
        let roots = vec![PathBuf::from("/w")];
        let ctx = Context {
            session: &session,
            workspace_roots: &roots,
        };
        parsed
            .hooks
            .iter()
            .filter(|h| h.event == event && a.applies(h, payload, &ctx))
            .map(|h| h.command.clone() + &h.entry.to_string())
            .collect()
    };
    assert_eq!(
        fires(
            "SessionStart",
            &EventPayload::SessionStart { first_turn: true }
        ),
        vec!["true1"]
    );
    assert!(
        fires(
            "SessionStart",
            &EventPayload::SessionStart { first_turn: false }
        )
        .is_empty()
    );
    let compaction = |t: &str| {
        EventPayload::PreCompact({
            let mut compaction = Compaction::default();
            compaction.trigger = t.into();
            compaction
        })
    };
    assert!(fires("PreCompress", &compaction("auto")).is_empty());
    assert_eq!(fires("PreCompress", &compaction("manual")).len(), 1);
    assert_eq!(
        fires(
            "BeforeAgent",
            &EventPayload::BeforeSubmitPrompt { prompt: "x".into() }
        )
        .len(),
        1
    );
    let msgs: Vec<&str> = parsed.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("\"startup|resume\" is compared exactly")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("\"matcher\" is ignored on BeforeAgent"))
    );
}

// ---------------------------------------------------------------------------------
// Exact stdin of every event (shaped like the real Gemini CLI 0.61.0 samples)
// ---------------------------------------------------------------------------------

const TS: &str = "2026-12-02T16:30:23.105Z";

fn spec(event: &str) -> HookSpec {
    HookSpec {
        options: Default::default(),
        dialect: Dialect::Gemini,
        event: event.to_string(),
        canonical: gemini::canonical_for(event),
        command: "true".into(),
        matcher_source: None,
        matcher: HookMatcher::Always,
        glob: None,
        policy: FailurePolicy::Closed,
        timeout: Duration::from_secs(60),
        source: PathBuf::from("/h/.gemini/settings.json"),
        scope: Scope::User,
        root: None,
        entry: 1,
        sandbox: true,
        run_async: false,
        network: true,
        loop_limit: None,
    }
}

fn stdin(event: &str, payload: &EventPayload) -> String {
    let session = SessionIdentity::new("4edcff26");
    let roots = vec![PathBuf::from("/tmp/proj-gemini")];
    let ctx = Context {
        session: &session,
        workspace_roots: &roots,
    };
    marshal(&spec(event), payload, &ctx, TS).to_string()
}

const BASE: &str = r#""session_id":"4edcff26","transcript_path":"","cwd":"/tmp/proj-gemini""#;

#[test]
fn stdin_of_every_wired_event() {
    let cases: Vec<(&str, EventPayload, &str)> = vec![
        (
            "BeforeTool",
            EventPayload::ToolGate(ToolCall::new(
                "read_file",
                obj(json!({"path": "README.md"})),
            )),
            r#""tool_name":"read_file","tool_input":{"file_path":"/tmp/proj-gemini/README.md"}"#,
        ),
        (
            "AfterTool",
            EventPayload::AfterToolUse({
                let mut result =
                    ToolResult::new("run_shell", obj(json!({"command": "echo hi"})), "hi\n");
                result.response = None;
                result.is_error = false;
                result.duration_ms = 3;
                result.tool_call_id = "c1".into();
                result
            }),
            r#""tool_name":"run_shell_command","tool_input":{"command":"echo hi"},"tool_response":{"llmContent":"hi\n","returnDisplay":"hi\n"}"#,
        ),
        (
            "BeforeAgent",
            EventPayload::BeforeSubmitPrompt {
                prompt: "hello".into(),
            },
            r#""prompt":"hello""#,
        ),
        (
            "AfterAgent",
            EventPayload::Stop {
                status: "completed".into(),
            },
            r#""prompt":"","prompt_response":"","stop_hook_active":false"#,
        ),
        (
            "SessionStart",
            EventPayload::SessionStart { first_turn: true },
            r#""source":"startup""#,
        ),
        (
            "SessionEnd",
            EventPayload::SessionEnd {
                reason: "completed".into(),
                duration_ms: 1,
            },
            r#""reason":"exit""#,
        ),
        (
            "PreCompress",
            EventPayload::PreCompact({
                let mut compaction = Compaction::default();
                compaction.trigger = "auto".into();
                compaction
            }),
            r#""trigger":"auto""#,
        ),
        (
            "Notification",
            EventPayload::Notification {
                title: None,
                notification_type: "ToolPermission".into(),
                message: "needs permission".into(),
                details: json!({"tool": "run_shell_command"}),
            },
            r#""notification_type":"ToolPermission","message":"needs permission","details":{"tool":"run_shell_command"}"#,
        ),
    ];
    for (event, payload, tail) in cases {
        assert_eq!(
            stdin(event, &payload),
            format!(r#"{{{BASE},"hook_event_name":"{event}","timestamp":"{TS}",{tail}}}"#),
            "{event}"
        );
    }
    // A failed tool carries `tool_response.error`.
    let failed = stdin(
        "AfterTool",
        &EventPayload::AfterToolUse({
            let mut result =
                ToolResult::new("run_shell", obj(json!({"command": "false"})), "exit 1");
            result.response = None;
            result.is_error = true;
            result.duration_ms = 3;
            result.tool_call_id = "c1".into();
            result
        }),
    );
    assert!(failed.contains(
        r#""tool_response":{"llmContent":"exit 1","returnDisplay":"exit 1","error":"exit 1"}"#
    ));
}

#[test]
fn field_order_matches_the_real_gemini_samples() {
    // Key order of the stdin Gemini CLI 0.61.0 sent (shared/spec/real-agent-payloads.md).
    let real: [(&str, &[&str]); 5] = [
        ("BeforeTool", &["tool_name", "tool_input"]),
        ("BeforeAgent", &["prompt"]),
        (
            "AfterAgent",
            &["prompt", "prompt_response", "stop_hook_active"],
        ),
        ("SessionStart", &["source"]),
        ("PreCompress", &["trigger"]),
    ];
    let payloads = |e: &str| match e {
        "BeforeTool" => {
            EventPayload::ToolGate(ToolCall::new("run_shell", obj(json!({"command": "x"}))))
        }
        "BeforeAgent" => EventPayload::BeforeSubmitPrompt { prompt: "p".into() },
        "AfterAgent" => EventPayload::Stop {
            status: "completed".into(),
        },
        "SessionStart" => EventPayload::SessionStart { first_turn: true },
        _ => EventPayload::PreCompact(Compaction::default()),
    };
    for (event, tail) in real {
        let v: Value = serde_json::from_str(&stdin(event, &payloads(event))).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = vec![
            "session_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "timestamp",
        ];
        expected.extend_from_slice(tail);
        assert_eq!(keys, expected, "{event}");
    }
}

// ---------------------------------------------------------------------------------
// Output channels and exit codes
// ---------------------------------------------------------------------------------

fn read(
    event: &str,
    payload: &EventPayload,
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Interpretation {
    Gemini.interpret(
        &spec(event),
        payload,
        &ProcessResult {
            exit_code: code,
            signal: None,
            stdout: stdout.as_bytes(),
            stderr: stderr.as_bytes(),
        },
    )
}

fn gate_payload() -> EventPayload {
    EventPayload::ToolGate(ToolCall::new(
        "run_shell",
        obj(json!({"command": "rm -rf /", "timeout": 5})),
    ))
}

fn clean(i: &Interpretation) -> &Outcome {
    assert!(i.failure.is_none(), "unexpected failure {:?}", i.failure);
    &i.outcome
}

#[test]
fn before_tool_decisions_reasons_and_tool_input() {
    let g = gate_payload();
    for (d, want) in [
        ("deny", Decision::Deny),
        ("block", Decision::Deny),
        ("allow", Decision::Allow),
        ("approve", Decision::Allow),
        ("ask", Decision::Ask),
    ] {
        let i = read(
            "BeforeTool",
            &g,
            Some(0),
            &json!({"decision": d, "reason": "why"}).to_string(),
            "",
        );
        assert_eq!(clean(&i).decision, Some(want), "{d}");
    }
    let i = read(
        "BeforeTool",
        &g,
        Some(0),
        r#"{"decision":"deny","reason":"no rm","systemMessage":"blocked rm"}"#,
        "",
    );
    assert_eq!(clean(&i).agent_message.as_deref(), Some("no rm"));
    assert_eq!(clean(&i).user_message.as_deref(), Some("blocked rm"));
    // `tool_input` is merged into the arguments (Gemini merges, Claude replaces).
    let i = read(
        "BeforeTool",
        &g,
        Some(0),
        r#"{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"rm -ri /tmp/x"}}}"#,
        "",
    );
    assert_eq!(
        clean(&i).updated_input,
        Some(obj(json!({"command": "rm -ri /tmp/x", "timeout": 5})))
    );
    // `continue: false` stops the loop (and so the tool).
    let i = read(
        "BeforeTool",
        &g,
        Some(0),
        r#"{"continue":false,"stopReason":"enough"}"#,
        "",
    );
    assert_eq!(clean(&i).decision, Some(Decision::Deny));
    assert_eq!(clean(&i).halt.as_ref().unwrap().reason, "enough");
    // An unknown decision value is a failed hook (fails closed by host policy).
    let i = read("BeforeTool", &g, Some(0), r#"{"decision":"maybe"}"#, "");
    assert_eq!(i.failure.as_ref().unwrap().kind, FailureKind::InvalidJson);
    // A double-encoded JSON answer is unwrapped, as Gemini CLI does.
    let i = read(
        "BeforeTool",
        &g,
        Some(0),
        &serde_json::to_string(r#"{"decision":"deny","reason":"enc"}"#).unwrap(),
        "",
    );
    assert_eq!(clean(&i).decision, Some(Decision::Deny));
}

#[test]
fn exit_codes() {
    let g = gate_payload();
    // 0 with plain text: allow, the text is a system message.
    let i = read("BeforeTool", &g, Some(0), "looks fine", "");
    assert_eq!(clean(&i).decision, None);
    assert_eq!(clean(&i).user_message.as_deref(), Some("looks fine"));
    assert!(!i.parse_ok);
    // 2 blocks with stderr.
    let i = read("BeforeTool", &g, Some(2), "", "dangerous command\n");
    assert_eq!(clean(&i).decision, Some(Decision::Deny));
    assert_eq!(
        clean(&i).agent_message.as_deref(),
        Some("dangerous command")
    );
    // 1 is a warning: a failed hook (the host policy decides).
    let i = read("BeforeTool", &g, Some(1), "", "oops");
    assert_eq!(i.failure.as_ref().unwrap().kind, FailureKind::Exit);
    // 3+ with text denies, as Gemini CLI's runner does.
    let i = read("BeforeTool", &g, Some(3), "", "policy says no");
    assert_eq!(clean(&i).decision, Some(Decision::Deny));
    // JSON on stderr (stdout empty) is the answer, whatever the exit code.
    let i = read(
        "BeforeTool",
        &g,
        Some(1),
        "",
        r#"{"decision":"deny","reason":"via stderr"}"#,
    );
    assert_eq!(clean(&i).agent_message.as_deref(), Some("via stderr"));

    // End to end: exit 1 fails closed on the gate by host policy.
    let v = verdict_of("echo warn >&2; exit 1");
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.effective_decision(), Decision::Deny);
    let v = verdict_of("echo 'no secrets' >&2; exit 2");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("no secrets"));
}

#[test]
fn other_events_channels() {
    let prompt = EventPayload::BeforeSubmitPrompt {
        prompt: "deploy".into(),
    };
    let i = read(
        "BeforeAgent",
        &prompt,
        Some(0),
        r#"{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"branch: main"}}"#,
        "",
    );
    assert_eq!(clean(&i).inject_context.as_deref(), Some("branch: main"));
    let i = read(
        "BeforeAgent",
        &prompt,
        Some(0),
        r#"{"decision":"deny","reason":"not now"}"#,
        "",
    );
    assert_eq!(clean(&i).halt.as_ref().unwrap().reason, "not now");
    let i = read("BeforeAgent", &prompt, Some(2), "", "blocked prompt");
    assert_eq!(clean(&i).halt.as_ref().unwrap().reason, "blocked prompt");

    let stop = EventPayload::Stop {
        status: "completed".into(),
    };
    let i = read(
        "AfterAgent",
        &stop,
        Some(0),
        r#"{"decision":"deny","reason":"run the tests first"}"#,
        "",
    );
    assert_eq!(
        clean(&i).queue_message,
        Some(QueueRequest {
            text: "run the tests first".into(),
            send_now: false,
            held: true
        }),
        "deny means retry: a follow-up held for a human"
    );
    let i = read(
        "AfterAgent",
        &stop,
        Some(0),
        r#"{"continue":false,"stopReason":"done"}"#,
        "",
    );
    assert_eq!(clean(&i).queue_message, None);
    assert_eq!(clean(&i).user_message.as_deref(), Some("done"));

    let after = EventPayload::AfterToolUse({
        let mut result = ToolResult::new("run_shell", obj(json!({"command": "ls"})), "a");
        result.response = None;
        result.is_error = false;
        result.duration_ms = 1;
        result.tool_call_id = "1".into();
        result
    });
    let i = read(
        "AfterTool",
        &after,
        Some(0),
        r#"{"decision":"deny","reason":"hide it","hookSpecificOutput":{"additionalContext":"ctx"}}"#,
        "",
    );
    assert_eq!(
        clean(&i).queue_message.as_ref().unwrap().text,
        "hide it\nctx"
    );
    assert!(!clean(&i).queue_message.as_ref().unwrap().held);

    let start = EventPayload::SessionStart { first_turn: true };
    let i = read(
        "SessionStart",
        &start,
        Some(0),
        r#"{"systemMessage":"hi","hookSpecificOutput":{"additionalContext":"repo notes"}}"#,
        "",
    );
    assert_eq!(clean(&i).inject_context.as_deref(), Some("repo notes"));
    assert_eq!(clean(&i).user_message.as_deref(), Some("hi"));
}

// ---------------------------------------------------------------------------------
// Timeouts, sequential chaining
// ---------------------------------------------------------------------------------

#[test]
fn timeouts_are_milliseconds_and_small_values_get_a_hint() {
    let fx = Fx::new();
    fx.gemini_user(json!({"BeforeTool": [{"hooks": [
        {"name": "slow", "type": "command", "command": "sleep 5", "timeout": 300},
    ]}]}));
    let v = shell(&fx.session(), "ls");
    assert_eq!(
        v.runs[0].failure.as_ref().unwrap().kind,
        FailureKind::Timeout
    );
    assert!(
        v.runs[0].duration < Duration::from_secs(4),
        "300 means 300 ms, not 300 s"
    );
    assert_eq!(
        v.effective_decision(),
        Decision::Deny,
        "fail-closed host policy"
    );

    let listing = fx.engine().list();
    assert_eq!(
        listing.hooks[0].timeout_ms, 300,
        "never silently reinterpreted"
    );
    assert!(listing.warnings.iter().any(|w| {
        w.message.contains("\"timeout\" 300 is 300 milliseconds")
            && w.message.contains("write 300000")
    }));

    let parsed = Gemini.parse(
        r#"{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"x"}]}]}}"#,
        std::path::Path::new("/s.json"),
        Scope::User,
        None,
    );
    assert_eq!(parsed.hooks[0].timeout, Duration::from_millis(60_000));
}

#[test]
fn sequential_definitions_chain_input_changes() {
    let fx = Fx::new();
    let second = fx.at("second.json");
    let rewrite = answer(
        json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "echo safe"}}}),
    );
    let record = format!("cat > {second}");
    fx.gemini_user(json!({"BeforeTool": [
        {"sequential": true, "hooks": [cmd("rewrite", &rewrite), cmd("record", &record)]},
    ]}));
    let v = shell(&fx.session(), "rm -rf /");
    assert_eq!(v.runs.len(), 2);
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&second).unwrap()).unwrap();
    assert_eq!(
        seen["tool_input"]["command"], "echo safe",
        "the second hook sees the first's change"
    );
    assert_eq!(v.updated_input, Some(obj(json!({"command": "echo safe"}))));

    // Parallel (the default): each hook sees the original input; the hook that did
    // not rewrite then checks the rewritten input too (a rewrite is checked like an
    // original).
    let fx = Fx::new();
    let second = fx.at("second.json");
    fx.gemini_user(json!({"BeforeTool": [{"hooks": [cmd("rewrite", &rewrite), cmd("record", &format!("sleep 0.2; {{ cat; echo; }} >> {second}"))]}]}));
    let v = shell(&fx.session(), "rm -rf /");
    let text = std::fs::read_to_string(&second).unwrap();
    let seen: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 2, "{text}");
    assert_eq!(seen[0]["tool_input"]["command"], "rm -rf /");
    assert_eq!(seen[1]["tool_input"]["command"], "echo safe");
    assert_eq!(v.runs.len(), 3);

    // BeforeAgent: additionalContext is appended to the prompt the next hook sees.
    let fx = Fx::new();
    let second = fx.at("second.json");
    let add = answer(
        json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "CTX"}}),
    );
    fx.gemini_user(json!({"BeforeAgent": [{"sequential": true, "hooks": [cmd("add", &add), cmd("rec", &format!("cat > {second}"))]}]}));
    let Fired::Verdict(v) = fx.session().fire(EventPayload::BeforeSubmitPrompt {
        prompt: "hi".into(),
    }) else {
        panic!("blocking")
    };
    assert_eq!(v.inject_context.as_deref(), Some("CTX"));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&second).unwrap()).unwrap();
    assert_eq!(seen["prompt"], "hi\n\nCTX");
}

// ---------------------------------------------------------------------------------
// Published events, warnings, real-shaped scripts
// ---------------------------------------------------------------------------------

#[test]
fn model_events_are_recognised_and_reported_unsupported() {
    let parsed: ParsedConfig = Gemini.parse(
        &json!({"hooks": {
            "BeforeModel": [def(None, &[("m", "true")])],
            "PreToolUse": [def(None, &[("c", "true")])],
            "beforetool": [def(None, &[("c", "true")])],
            "enabled": true,
        }})
        .to_string(),
        std::path::Path::new("/h/.gemini/settings.json"),
        Scope::User,
        None,
    );
    let msgs: Vec<&str> = parsed.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        msgs.iter().any(|m| m
            .contains("\"BeforeModel\" is recognised by Gemini CLI but not supported")
            && m.contains("model-request")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("Unknown Gemini hook event \"PreToolUse\"")
                && m.contains("did you mean BeforeTool?"))
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("did you mean \"BeforeTool\"?"))
    );
    assert!(
        !msgs.iter().any(|m| m.contains("\"enabled\"")),
        "a reserved key, not an event"
    );
    assert_eq!(parsed.hooks.len(), 1, "the model hook is listed");
    assert!(!parsed.hooks[0].supported());
    for e in gemini::PUBLISHED_EVENTS {
        assert!(
            gemini::canonical_for(e).is_some() != gemini::unsupported_reason(e).is_some(),
            "{e}"
        );
    }
}

#[test]
fn published_security_hook_script_blocks_secrets() {
    // The shape of the docs' "block secrets" BeforeTool hook: read stdin with jq,
    // log to stderr, answer JSON on stdout.
    let fx = Fx::new();
    let script = fx.write(
        "ws/.gemini/hooks/block-secrets.sh",
        r##"#!/usr/bin/env bash
input=$(cat)
content=$(echo "$input" | jq -r '.tool_input.content // .tool_input.new_string // ""')
if echo "$content" | grep -qE 'api[_-]?key|password|secret'; then
  echo "Blocked potential secret" >&2
  cat <<EOF
{"decision": "deny", "reason": "Security Policy: Potential secret detected in content.", "systemMessage": "Security scanner blocked operation"}
EOF
  exit 0
fi
echo '{"decision": "allow"}'
exit 0
"##,
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    fx.gemini_project(json!({"BeforeTool": [{"matcher": "write_file|replace", "hooks": [
        {"name": "secret-scanner", "type": "command", "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/block-secrets.sh", "timeout": 5000}
    ]}]}));
    let session = fx.trusted_session();
    let write = |content: &str| {
        session.gate_tool(ToolCall::new(
            "write_file",
            obj(json!({"path": "config.txt", "content": content})),
        ))
    };
    let v = write("api_key=123");
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(
        v.agent_message.as_deref(),
        Some("Security Policy: Potential secret detected in content.")
    );
    assert_eq!(
        v.user_message.as_deref(),
        Some("Security scanner blocked operation")
    );
    assert_eq!(write("hello").effective_decision(), Decision::Allow);
    assert_eq!(write("hello").runs[0].result, RunOutcome::Allow);
}

#[test]
fn notification_and_detached_events_fire() {
    let fx = Fx::new();
    let out = fx.at("note.json");
    fx.gemini_user(json!({"Notification": [def(None, &[("n", &format!("cat > {out}"))])]}));
    let session = fx.session();
    let fired = session.fire(EventPayload::Notification {
        title: None,
        notification_type: "ToolPermission".into(),
        message: "Gemini needs your permission".into(),
        details: Value::Null,
    });
    assert!(matches!(fired, Fired::Detached { dispatched: 1, .. }));
    session.wait_idle();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["hook_event_name"], "Notification");
    assert_eq!(v["notification_type"], "ToolPermission");
    assert_eq!(v["details"], json!({}));
}

#[test]
fn failure_policy_setting_restores_gemini_fail_open() {
    let fx = Fx::new();
    fx.gemini_user(json!({"BeforeTool": [def(None, &[("warn", "echo oops >&2; exit 1")])]}));
    // Default: the host policy denies a gated action whose hook failed.
    let v = shell(&fx.session(), "ls");
    assert_eq!(v.runs[0].result, RunOutcome::Failed);
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert!(fx.engine().list().hooks[0].fail_closed);

    // Another dialect's setting changes nothing here.
    let config = fx.config().failure_policy("claude", FailurePolicy::Open);
    let v = shell(
        &Engine::new(config.build()).session(SessionIdentity::new("c")),
        "ls",
    );
    assert_eq!(v.effective_decision(), Decision::Deny);

    let config = fx.config().failure_policy("gemini", FailurePolicy::Open);
    let engine = Engine::new(config.build());
    let v = shell(&engine.session(SessionIdentity::new("c")), "ls");
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
        listing.failure_policy.get("gemini"),
        Some(&FailurePolicy::Open)
    );
}
