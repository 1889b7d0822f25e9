//! `init [--dialect D] [DIR]`: writes a working, commented first hook for a workspace.
//!
//! One config file and one executable guard script per dialect, in the file and shape
//! that dialect's agent reads, with the same behaviour everywhere: before a shell
//! command runs, deny one that deletes the filesystem root or the home directory
//! (`rm -rf /`, `rm -rf ~`), and stay silent otherwise. The default dialect is
//! `copse` (`.copse/hooks.json`), the format every agent served through copse-hooks
//! reads, so a first hook works whatever the agent. Nothing is ever overwritten: if
//! either file exists, nothing is written and the error names it. JSON cannot hold
//! comments, so the explanations live in the script.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks_wire::output as wire;

use crate::args::{Global, InitDialect};
use crate::output::{self, paint};

/// What `init` writes for one dialect.
struct Template {
    name: &'static str,
    /// The config, relative to the workspace root.
    config: &'static str,
    config_text: &'static str,
    /// The script, relative to the workspace root.
    script: &'static str,
    /// The event and the matcher, for the summary.
    event: &'static str,
    /// How the script denies (a shell snippet), and how the dialect reads it.
    deny: &'static str,
    deny_note: &'static str,
    doc: &'static str,
}

fn template(dialect: InitDialect) -> Template {
    match dialect {
        InitDialect::Cursor => Template {
            name: "cursor",
            config: ".cursor/hooks.json",
            config_text: r#"{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [
      {
        "command": ".cursor/hooks/guard.sh",
        "timeout": 10
      }
    ]
  }
}
"#,
            script: ".cursor/hooks/guard.sh",
            event: "beforeShellExecution (every shell command)",
            deny: r#"  printf '%s\n' '{"permission": "deny", "agent_message": "Refusing to delete the filesystem root or the home directory.", "user_message": "Blocked a recursive delete of / or ~."}'
  exit 0"#,
            deny_note: "# Cursor reads the JSON printed on stdout: \"permission\" is allow, ask or deny;\n# \"agent_message\" goes to the model, \"user_message\" to you.",
            doc: "docs/dialects/cursor.md",
        },
        InitDialect::Claude => Template {
            name: "claude",
            config: ".claude/settings.json",
            config_text: r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh",
            "timeout": 10
          }
        ]
      }
    ]
  }
}
"#,
            script: ".claude/hooks/guard.sh",
            event: "PreToolUse, matcher Bash (every shell command)",
            deny: r#"  echo "Refusing to delete the filesystem root or the home directory." >&2
  exit 2"#,
            deny_note: "# Claude Code reads exit 2 as deny, with stderr as the reason shown to the model.",
            doc: "docs/dialects/claude.md",
        },
        InitDialect::Gemini => Template {
            name: "gemini",
            config: ".gemini/settings.json",
            config_text: r#"{
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [
          {
            "type": "command",
            "name": "guard",
            "command": ".gemini/hooks/guard.sh",
            "timeout": 10000
          }
        ]
      }
    ]
  }
}
"#,
            script: ".gemini/hooks/guard.sh",
            event: "BeforeTool, matcher run_shell_command (every shell command)",
            deny: r#"  echo "Refusing to delete the filesystem root or the home directory." >&2
  exit 2"#,
            deny_note: "# Gemini CLI reads exit 2 as deny, with stderr as the reason (its timeouts are in\n# milliseconds).",
            doc: "docs/dialects/gemini.md",
        },
        InitDialect::Codex => Template {
            name: "codex",
            config: ".codex/hooks.json",
            config_text: r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": ".codex/hooks/guard.sh",
            "timeout": 10
          }
        ]
      }
    ]
  }
}
"#,
            script: ".codex/hooks/guard.sh",
            event: "PreToolUse, matcher Bash (every shell command)",
            deny: r#"  echo "Refusing to delete the filesystem root or the home directory." >&2
  exit 2"#,
            deny_note: "# Codex reads exit 2 as deny, with stderr as the reason shown to the model.",
            doc: "docs/dialects/codex.md",
        },
        InitDialect::Copilot => Template {
            name: "copilot",
            config: ".github/hooks/guard.json",
            config_text: r#"{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {
        "type": "command",
        "matcher": "bash",
        "bash": ".github/hooks/guard.sh",
        "timeoutSec": 10
      }
    ]
  }
}
"#,
            script: ".github/hooks/guard.sh",
            event: "preToolUse, matcher bash (every shell command)",
            deny: r#"  printf '%s\n' '{"permissionDecision": "deny", "permissionDecisionReason": "Refusing to delete the filesystem root or the home directory."}'
  exit 0"#,
            deny_note: "# Copilot CLI reads the JSON printed on stdout: \"permissionDecision\" is allow, ask or\n# deny, and \"permissionDecisionReason\" goes to the model. A crash denies too.",
            doc: "docs/dialects/copilot.md",
        },
        InitDialect::Copse => Template {
            name: "copse",
            config: ".copse/hooks.json",
            config_text: r#"{
  "version": 1,
  "hooks": {
    "toolGate": [
      {
        "command": ".copse/hooks/guard.sh",
        "matcher": "^run_shell$",
        "timeout": 10
      }
    ]
  }
}
"#,
            script: ".copse/hooks/guard.sh",
            event: "toolGate, matcher ^run_shell$ (every shell command)",
            deny: r#"  printf '%s\n' '{"decision": "deny", "agentMessage": "Refusing to delete the filesystem root or the home directory.", "userMessage": "Blocked a recursive delete of / or ~."}'
  exit 0"#,
            deny_note: "# copse-hooks reads the JSON printed on stdout: \"decision\" is allow, ask or deny;\n# \"agentMessage\" goes to the model, \"userMessage\" to you.",
            doc: "docs/dialects/copse.md",
        },
    }
}

fn script_text(t: &Template) -> String {
    format!(
        r#"#!/bin/sh
# A first hook, written by `copse-hooks init --dialect {name}` (config: {config}).
#
# It runs before each shell command the agent wants to run ({event}).
# The tool call arrives as JSON on stdin; this guard refuses commands that delete the
# filesystem root or your home directory, and says nothing about anything else.
{deny_note}
#
# Try it:    copse-hooks gate run_shell --input '{{"command": "rm -rf /"}}'   (deny)
#            copse-hooks gate run_shell --input '{{"command": "ls"}}'         (allow)
# Why not?   copse-hooks gate --explain run_shell --input '{{"command": "ls"}}'
# Editing:   trust pins this file, so after an edit its hook stops running until you
#            trust the workspace again: `copse-hooks trust --diff` shows the change,
#            `copse-hooks watch` shows it and asks with one key.
# Reference: {doc}
payload=$(cat)

case "$payload" in
  *'rm -rf /"'* | *'rm -rf / '* | *'rm -rf /*'* | *'rm -rf ~'* | *'rm -rf $HOME'*)
{deny}
    ;;
esac

# No objection: exit 0 and print nothing, and the command goes ahead.
exit 0
"#,
        name = t.name,
        config = t.config,
        event = t.event,
        deny_note = t.deny_note,
        doc = t.doc,
        deny = t.deny.replace("\n  ", "\n    ").replacen("  ", "    ", 1),
    )
}

pub fn run(global: &Global, dialect: InitDialect, dir: Option<&Path>) -> Result<ExitCode> {
    let root = crate::commands::settings::root_arg(global, dir)?;
    let t = template(dialect);
    let config = root.join(t.config);
    let script = root.join(t.script);
    for path in [&config, &script] {
        if std::fs::symlink_metadata(path).is_ok() {
            anyhow::bail!(
                "{} already exists; `init` never overwrites a file, so nothing was written. Add the hook to it by hand ({}), or pick another format with --dialect (cursor, claude, gemini, codex, copilot, copse)",
                path.display(),
                t.doc
            );
        }
    }
    // Written with O_EXCL: a file that appeared since the check is never clobbered.
    write_new(&config, t.config_text.as_bytes(), 0o644)?;
    if let Err(e) = write_new(&script, script_text(&t).as_bytes(), 0o755) {
        // Leave nothing half-made: the config would name a script that is not there.
        let _ = std::fs::remove_file(&config);
        return Err(e);
    }
    let steps = next_steps(&root);
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&wire::InitOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                workspace: root.display().to_string(),
                dialect: t.name.to_string(),
                files: vec![config.display().to_string(), script.display().to_string()],
                next_steps: steps.iter().map(|(c, _)| c.clone()).collect(),
            })?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!("Wrote a first {} hook in {}:", t.name, output::path(&root));
    outln!("  {}  the config: {}", output::path(&config), t.event);
    outln!(
        "  {}  the script (executable): denies `rm -rf /` and `rm -rf ~`",
        output::path(&script)
    );
    outln!("Next:");
    for (i, (command, why)) in steps.iter().enumerate() {
        outln!(
            "  {}. {}  {}",
            i + 1,
            output::clean(command),
            paint(why, output::DIM, false)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The commands to run next: turn hooks on (when off), trust, try, watch.
fn next_steps(root: &Path) -> Vec<(String, &'static str)> {
    let quoted = copse_hooks::shell_quote(root);
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .is_some_and(|d| d == root);
    let at = if here {
        String::new()
    } else {
        format!("--workspace {quoted} ")
    };
    let enabled = copse_hooks::Settings::load(&crate::commands::settings::settings_path())
        .map(|s| s.cursor_hooks_enabled)
        .unwrap_or(false);
    let mut steps = Vec::new();
    if !enabled {
        steps.push((
            "copse-hooks enable".to_string(),
            "(hooks are off until you turn them on)",
        ));
    }
    steps.push((
        format!("copse-hooks trust {quoted}"),
        "(project hooks run only in a trusted workspace)",
    ));
    steps.push((
        format!("copse-hooks {at}gate run_shell --input '{{\"command\": \"rm -rf /\"}}'"),
        "(should say deny)",
    ));
    steps.push((
        format!("copse-hooks watch {quoted}"),
        "(each run live; after an edit, the diff and a one-key trust)",
    ));
    steps
}

fn write_new(path: &PathBuf, bytes: &[u8], mode: u32) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("could not create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("could not create {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("could not write {}", path.display()))?;
    // The umask may have narrowed the mode: the script must be executable.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("could not set the mode of {}", path.display()))?;
    Ok(())
}
