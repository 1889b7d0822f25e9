//! Test-only builders for the run path's unit tests: hooks parsed from a small config
//! by their dialect's own `parse` (as the engine builds them), and a [`RunInput`] with
//! no sandbox, no persistent pool and only the host's `PATH` in its base environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::{RunInput, SandboxConfig};
use crate::dialect::{Context, Dialect, HookSpec, ParsedConfig, Scope, adapter};
use crate::event::{EventPayload, SessionIdentity, ToolCall};
use crate::http::HttpPolicy;
use crate::outcome::FailurePolicy;
use crate::spawn::Limits;

/// A temporary directory (config files, markers, a hook's working directory) and the
/// pieces a [`RunInput`] borrows.
pub(crate) struct Fixture {
    pub dir: tempfile::TempDir,
    session: SessionIdentity,
    roots: Vec<PathBuf>,
    base_env: Vec<(OsString, OsString)>,
    /// The per-dialect `failurePolicy` setting.
    pub failure_policy: BTreeMap<String, FailurePolicy>,
    /// Output caps and grace periods.
    pub limits: Limits,
    /// The sandbox hooks run in (`None`: not sandboxed).
    pub sandbox: Option<SandboxConfig>,
    /// Claude's http hook limits.
    pub http_policy: Option<HttpPolicy>,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let roots = vec![dir.path().to_path_buf()];
        let base_env = std::env::var_os("PATH")
            .map(|path| vec![(OsString::from("PATH"), path)])
            .unwrap_or_default();
        Fixture {
            dir,
            session: SessionIdentity::new("conv-unit"),
            roots,
            base_env,
            failure_policy: BTreeMap::new(),
            limits: Limits::default(),
            sandbox: None,
            http_policy: None,
        }
    }

    /// A path in the fixture's directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A path in the fixture's directory, as text for a shell command.
    pub(crate) fn at(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    /// `text` parsed as a user config of `dialect` named `file` in the fixture's
    /// directory (the file itself is not written), which must parse without warnings.
    pub(crate) fn parse(&self, dialect: Dialect, file: &str, text: &str) -> Arc<ParsedConfig> {
        self.parse_at(dialect, &self.path(file), text)
    }

    /// Like [`Fixture::parse`], for a config at `source`.
    pub(crate) fn parse_at(
        &self,
        dialect: Dialect,
        source: &Path,
        text: &str,
    ) -> Arc<ParsedConfig> {
        let parsed = adapter(dialect).parse(text, source, Scope::User, None);
        assert!(
            parsed.warnings.is_empty(),
            "the test config parses cleanly: {:?}",
            parsed.warnings
        );
        Arc::new(parsed)
    }

    /// A Copse `hooks.json` with `hooks` as its `hooks` object.
    pub(crate) fn copse(&self, hooks: Value) -> Arc<ParsedConfig> {
        self.parse(
            Dialect::Copse,
            "hooks.json",
            &json!({ "hooks": hooks }).to_string(),
        )
    }

    /// The one Copse `toolGate` hook `entry` (an object with at least a `command`).
    pub(crate) fn copse_gate(&self, entry: Value) -> Arc<ParsedConfig> {
        let config = self.copse(json!({ "toolGate": [entry] }));
        assert_eq!(config.hooks.len(), 1);
        config
    }

    /// The input for one run of `event`.
    pub(crate) fn input<'a>(&'a self, event: &'a EventPayload) -> RunInput<'a> {
        RunInput {
            event,
            ctx: Context {
                session: &self.session,
                workspace_roots: &self.roots,
            },
            base_env: &self.base_env,
            session_env: None,
            child_depth: 1,
            depth_token: None,
            limits: self.limits,
            sandbox: self.sandbox.as_ref(),
            failure_policy: &self.failure_policy,
            http_policy: self.http_policy.as_ref(),
            persistent: None,
        }
    }
}

/// The first hook of `config`.
pub(crate) fn first(config: &ParsedConfig) -> &HookSpec {
    &config.hooks[0]
}

/// A `run_shell` tool gate for `command`.
pub(crate) fn shell_gate(command: &str) -> EventPayload {
    EventPayload::ToolGate(ToolCall::new("run_shell", json!({ "command": command })))
}

/// A shell command that prints `answer` (JSON without single quotes) and exits 0.
pub(crate) fn answer(answer: &Value) -> String {
    let text = answer.to_string();
    assert!(!text.contains('\''), "no single quote in {text}");
    format!("printf '%s\\n' '{text}'")
}
