//! A session's environment overlays: the variables `sessionStart` hooks exported,
//! kept per (scope, root) so a hook only ever sees its own scope and root's. Shared by
//! the session (which records them) and the runner (which hands them to a hook).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::dialect::{HookSpec, Scope};

/// The session's environment overlays, one per (scope, root) that set one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlays(Vec<(OverlayKey, BTreeMap<String, String>)>);

/// Whose overlay: the scope and root of the hooks that set it.
type OverlayKey = (Scope, Option<PathBuf>);

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

    /// The overlay `hook` receives: its own scope and root's, and none at all when it
    /// runs outside the sandbox.
    pub(crate) fn for_hook(&self, hook: &HookSpec) -> Option<&BTreeMap<String, String>> {
        if !hook.sandbox {
            return None;
        }
        self.get(hook.scope, hook.root.as_deref())
    }
}
