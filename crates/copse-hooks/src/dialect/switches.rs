//! The dialect-wide switches config files set, across every layer: Claude's
//! `disableAllHooks`, Gemini's `hooksConfig.enabled` / `hooksConfig.disabled` and
//! Codex's `[features] hooks` / user-level `[hooks.state]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Dialect, HookExtra, HookSpec, ParsedConfig, Scope};

/// The switches in force, each with the file that set it.
#[derive(Debug, Default)]
pub(crate) struct Switches {
    claude_off: bool,
    gemini_off: Option<PathBuf>,
    codex_off: Option<PathBuf>,
    gemini_disabled: BTreeMap<String, PathBuf>,
    codex_disabled: BTreeMap<String, PathBuf>,
}

/// One trusted config file, as the switches read it.
pub(crate) struct Layer<'a> {
    pub dialect: Dialect,
    pub scope: Scope,
    pub path: &'a Path,
    pub exists: bool,
    pub config: &'a ParsedConfig,
}

impl Switches {
    /// The switches of these trusted configs, given in configured (precedence) order.
    pub(crate) fn of<'a>(layers: impl Iterator<Item = Layer<'a>>) -> Switches {
        let mut out = Switches::default();
        let mut claude_off = None;
        for layer in layers {
            let sw = &layer.config.switches;
            let source = layer.path.to_path_buf();
            match layer.dialect {
                // Claude's `disableAllHooks`: the value of the highest-precedence
                // settings file that sets it (local over project over user), so a
                // project `false` overrides a user `true`.
                Dialect::Claude => {
                    if let Some(v) = layer.config.disable_all_hooks {
                        claude_off = Some(v);
                    }
                }
                Dialect::Gemini if layer.exists => {
                    if sw.all_off && out.gemini_off.is_none() {
                        out.gemini_off = Some(source.clone());
                    }
                    for d in &sw.disabled {
                        out.gemini_disabled
                            .entry(d.clone())
                            .or_insert(source.clone());
                    }
                }
                Dialect::Codex if layer.exists => {
                    if sw.all_off && out.codex_off.is_none() {
                        out.codex_off = Some(source.clone());
                    }
                    // Codex ignores a project layer's `[hooks.state]`.
                    if layer.scope == Scope::User {
                        for k in &sw.disabled_keys {
                            out.codex_disabled
                                .entry(k.clone())
                                .or_insert(source.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        out.claude_off = claude_off.unwrap_or(false);
        out
    }

    /// Whether a switch turns off every hook of `hook`'s dialect before anything
    /// else is asked (Claude's `disableAllHooks`).
    pub(crate) fn all_off(&self, hook: &HookSpec) -> bool {
        self.claude_off && hook.dialect == Dialect::Claude
    }

    /// `None` when `hook` may run; otherwise why its dialect's switches turn it off.
    pub(crate) fn allows(&self, hook: &HookSpec, extra: &HookExtra) -> Option<String> {
        match hook.dialect {
            Dialect::Gemini => {
                if let Some(src) = &self.gemini_off {
                    return Some(format!(
                        "\"hooksConfig.enabled\" is false in {}",
                        src.display()
                    ));
                }
                // Gemini CLI's key: the hook's name, or its command when it has none.
                let key = extra.name.as_deref().unwrap_or(&hook.command);
                self.gemini_disabled.get(key).map(|src| {
                    format!(
                        "\"{key}\" is listed in \"hooksConfig.disabled\" in {}",
                        src.display()
                    )
                })
            }
            Dialect::Codex => {
                if let Some(src) = &self.codex_off {
                    return Some(format!("[features] hooks = false in {}", src.display()));
                }
                let key = extra.state_key.as_ref()?;
                self.codex_disabled.get(key).map(|src| {
                    format!(
                        "[hooks.state.\"{key}\"] enabled = false in {}",
                        src.display()
                    )
                })
            }
            _ => None,
        }
    }
}
