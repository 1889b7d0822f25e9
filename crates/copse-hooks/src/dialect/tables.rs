//! What lint and the notices look names up in, per dialect: the event names a dialect
//! knows, the tool names its matchers compare with, the keys a hook entry takes.

use super::Dialect;

/// The event names a dialect knows (for did-you-mean).
pub(crate) fn known_events(dialect: Dialect) -> Vec<&'static str> {
    match dialect {
        Dialect::Cursor => crate::dialect::cursor::PUBLISHED_EVENTS.to_vec(),
        Dialect::Claude => crate::dialect::claude::PUBLISHED_EVENTS.to_vec(),
        Dialect::Gemini => crate::dialect::gemini::PUBLISHED_EVENTS.to_vec(),
        Dialect::Codex => crate::dialect::codex::PUBLISHED_EVENTS.to_vec(),
        Dialect::Copilot => crate::dialect::copilot::PUBLISHED_EVENTS.to_vec(),
        Dialect::Copse => crate::event::CanonicalEvent::ALL
            .iter()
            .map(|e| e.name())
            .chain(crate::dialect::copse::UNWIRED_EVENTS)
            .collect(),
    }
}

/// The tool names a matcher of this dialect and event is compared with, when its
/// subject is a tool name.
pub(crate) fn matcher_tools(dialect: Dialect, event: &str) -> Option<&'static [&'static str]> {
    match (dialect, event) {
        (Dialect::Cursor, "preToolUse" | "postToolUse" | "postToolUseFailure") => {
            Some(&["Shell", "Read", "Write", "Delete", "Grep", "Task"])
        }
        (
            Dialect::Claude,
            "PreToolUse" | "PostToolUse" | "PostToolUseFailure" | "PermissionRequest",
        ) => Some(&[
            "Bash",
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "Grep",
            "Glob",
            "LS",
            "Task",
            "Agent",
            "WebFetch",
            "WebSearch",
            "NotebookEdit",
            "NotebookRead",
            "TodoWrite",
            "ExitPlanMode",
        ]),
        (Dialect::Copse, "toolGate" | "afterToolUse") => Some(crate::event::tool::CANONICAL),
        (Dialect::Copilot, "preToolUse" | "postToolUse" | "permissionRequest") => Some(&[
            "bash",
            "view",
            "create",
            "edit",
            "str_replace_editor",
            "apply_patch",
            "grep",
            "rg",
            "glob",
            "task",
            "web_fetch",
            "web_search",
            "ask_user",
            "update_todo",
            "read_bash",
            "write_bash",
            "stop_bash",
            "list_bash",
            "skill",
            "sql",
        ]),
        _ => None,
    }
}

/// The keys a hook entry of a dialect takes: the vendor dialects' come from the
/// serde structs their parsers read (`dialect::schemas::entry_keys`).
pub(crate) fn entry_keys(dialect: Dialect) -> Vec<&'static str> {
    match dialect {
        Dialect::Copse => vec![
            "command",
            "matcher",
            "glob",
            "onFailure",
            "sandbox",
            "network",
            "async",
            "loop_limit",
            "timeout",
            "persistent",
            "idleTimeout",
        ],
        vendor => crate::dialect::schemas::entry_keys(vendor)
            .iter()
            .map(String::as_str)
            .collect(),
    }
}
