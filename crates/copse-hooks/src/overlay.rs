//! A session's environment overlays: the variables `sessionStart` hooks exported,
//! kept per (scope, root) so a hook only ever sees its own scope and root's. Shared by
//! the session (which records them), the runner (which hands them to a hook) and the
//! shim (which persists them between an agent's calls, [`StoredOverlay`]).
//!
//! [`refusal`] is the one door every overlay variable passes, whichever path set it
//! (an engine session, the shim's session file, the daemon): loader, interpreter and
//! credential names ([`crate::env::overlay_refusal`]) and NUL-bearing values never
//! enter an overlay, and nothing in an overlay ever becomes a hook's base environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scope::Scope;

/// The session's environment overlays, one per (scope, root) that set one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlays(Vec<(OverlayKey, BTreeMap<String, String>)>);

/// Whose overlay: the scope and root of the hooks that set it.
type OverlayKey = (Scope, Option<PathBuf>);

/// Why an overlay variable is refused, or `None` when it may be kept: the single
/// filter for every overlay, whichever path stores it.
pub fn refusal(name: &str, value: &str) -> Option<&'static str> {
    crate::env::overlay_refusal(name).or_else(|| {
        value
            .contains('\0')
            .then_some("its value contains a NUL byte")
    })
}

/// One (scope, root)'s overlay as the shim keeps it in a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredOverlay {
    /// The scope of the hooks that set it.
    pub scope: Scope,
    /// Their workspace root (none for user hooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    /// The variables.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
}

impl Overlays {
    pub(crate) fn get(
        &self,
        scope: Scope,
        root: Option<&Path>,
    ) -> Option<&BTreeMap<String, String>> {
        self.0
            .iter()
            .find(|((s, r), _)| *s == scope && r.as_deref() == root)
            .map(|(_, vars)| vars)
    }

    pub(crate) fn extend(
        &mut self,
        scope: Scope,
        root: Option<&Path>,
        vars: BTreeMap<String, String>,
    ) {
        if let Some((_, existing)) = self
            .0
            .iter_mut()
            .find(|((s, r), _)| *s == scope && r.as_deref() == root)
        {
            existing.extend(vars);
        } else {
            self.0.push(((scope, root.map(Path::to_path_buf)), vars));
        }
    }

    /// Every overlay merged (later ones win a name both set).
    pub(crate) fn merged(&self) -> BTreeMap<String, String> {
        let mut all = BTreeMap::new();
        for (_, vars) in &self.0 {
            all.extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        all
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The overlay a hook of `scope` and `root` receives: its own scope and root's,
    /// and none at all when it runs outside the sandbox (`sandboxed` false).
    pub(crate) fn for_hook(
        &self,
        sandboxed: bool,
        scope: Scope,
        root: Option<&std::path::Path>,
    ) -> Option<&BTreeMap<String, String>> {
        if !sandboxed {
            return None;
        }
        self.get(scope, root)
    }

    /// The overlays as a session file keeps them (empty overlays left out).
    pub(crate) fn to_stored(&self) -> Vec<StoredOverlay> {
        self.0
            .iter()
            .filter(|(_, vars)| !vars.is_empty())
            .map(|((scope, root), vars)| StoredOverlay {
                scope: *scope,
                root: root.clone(),
                vars: vars.clone(),
            })
            .collect()
    }

    /// Overlays read back from a session file, each variable passed through
    /// [`refusal`] again (the file is only as trustworthy as its directory); returns
    /// the overlays and the names dropped.
    pub(crate) fn from_stored(stored: &[StoredOverlay]) -> (Overlays, Vec<String>) {
        let mut overlays = Overlays::default();
        let mut dropped = Vec::new();
        for s in stored {
            let mut vars = BTreeMap::new();
            for (k, v) in &s.vars {
                if refusal(k, v).is_some() {
                    dropped.push(k.clone());
                } else {
                    vars.insert(k.clone(), v.clone());
                }
            }
            overlays.extend(s.scope, s.root.as_deref(), vars);
        }
        (overlays, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_overlays_pass_the_filter_again() {
        let stored = vec![StoredOverlay {
            scope: Scope::Project,
            root: Some(PathBuf::from("/w")),
            vars: BTreeMap::from([
                ("LD_PRELOAD".to_string(), "/tmp/x.so".to_string()),
                ("FEATURE".to_string(), "on".to_string()),
                ("BAD".to_string(), "a\0b".to_string()),
            ]),
        }];
        let (overlays, dropped) = Overlays::from_stored(&stored);
        assert_eq!(dropped, vec!["BAD".to_string(), "LD_PRELOAD".to_string()]);
        let vars = overlays
            .get(Scope::Project, Some(Path::new("/w")))
            .cloned()
            .unwrap_or_default();
        assert_eq!(vars.len(), 1);
        assert_eq!(vars.get("FEATURE").map(String::as_str), Some("on"));
        assert!(overlays.get(Scope::User, None).is_none());
        assert_eq!(overlays.to_stored().len(), 1);
    }
}
