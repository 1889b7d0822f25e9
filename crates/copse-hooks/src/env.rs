//! The hook process environment: the parent's environment minus LLM provider keys,
//! plus the recursion-guard depth.
//!
//! Provider keys are removed by an explicit list and by a pattern, so a new
//! `<PROVIDER>_API_KEY` is caught without a code change. Tool tokens such as
//! `GITHUB_TOKEN` stay: hooks legitimately use them (and the docs say so).

use std::ffi::{OsStr, OsString};

/// The recursion-guard variable: a process whose own depth is >= 1 runs no hooks.
pub const DEPTH_VAR: &str = "COPSE_HOOK_DEPTH";

/// The deepest level at which hooks still run (exclusive).
pub const MAX_HOOK_DEPTH: u32 = 1;

/// The depth at which managed hooks stop running too (a managed hook that starts an
/// agent that calls us again is bounded here); a gated event there is denied.
pub const MAX_MANAGED_DEPTH: u32 = 4;

/// The proof that a depth was handed down by copse-hooks itself: a keyed digest of
/// the depth that only a process which can read `$COPSE_DIR/hook-key` can make. A
/// `COPSE_HOOK_DEPTH` without it (set in an agent's `env` block, a `.env` file, a
/// shell profile) is ignored, so nothing in the agent's environment switches hooks
/// off.
pub const TOKEN_VAR: &str = "COPSE_HOOK_TOKEN";

/// The key file, in `$COPSE_DIR` (0600, made at the first hook this user runs).
pub const KEY_FILE: &str = "hook-key";

/// The token for `depth` under this `$COPSE_DIR`'s key, making the key on first use.
/// `None` when the key can be neither read nor made (the child then carries no token:
/// an unverifiable depth, which a process that can read the key treats as forged).
pub fn depth_token(copse_dir: &std::path::Path, depth: u32) -> Option<String> {
    let path = copse_dir.join(KEY_FILE);
    let key = match crate::fsread::read_config(&path, 4096) {
        Ok(key) if key.len() >= 32 => key,
        Ok(_) => return None,
        Err(e) if e.is_not_found() => make_key(&path)?,
        Err(_) => return None,
    };
    Some(token_of(&key, depth))
}

/// Writes a new random key (exclusive create, 0600); on a race the winner's is read.
fn make_key(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::{Read as _, Write as _};
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .ok()?;
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(dir) = path.parent() {
        let _ = crate::private::ensure_dir(dir);
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(hex.as_bytes()).ok()?;
            Some(hex.into_bytes())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            crate::fsread::read_config(path, 4096).ok()
        }
        Err(_) => None,
    }
}

fn token_of(key: &[u8], depth: u32) -> String {
    use sha2::{Digest as _, Sha256};
    let mut h = Sha256::new();
    h.update(b"copse-hook-depth\0");
    h.update(key);
    h.update(b"\0");
    h.update(depth.to_string().as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A depth as this process's environment claims it, checked against the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depth {
    /// The depth in force (0 when the claim is not ours).
    pub depth: u32,
    /// Whether a depth was claimed without our token (and so ignored).
    pub forged: bool,
}

/// Checks a claimed `COPSE_HOOK_DEPTH` against its `COPSE_HOOK_TOKEN`: a claim with
/// the token our key makes stands; one without it is ignored (`forged`) where the key
/// can be read, and where no key exists (no hook of ours ever ran). Where the key
/// exists but cannot be read (a sandbox that hides it) the claim stands: only our
/// own hooks run there.
pub fn verified_depth(
    raw: Option<&OsStr>,
    token: Option<&OsStr>,
    copse_dir: &std::path::Path,
) -> Depth {
    let depth = parse_depth(raw);
    if depth == 0 {
        return Depth {
            depth: 0,
            forged: false,
        };
    }
    let path = copse_dir.join(KEY_FILE);
    let ok = match crate::fsread::read_config(&path, 4096) {
        Ok(key) => token.and_then(OsStr::to_str) == Some(token_of(&key, depth).as_str()),
        Err(e) if e.is_not_found() => false,
        Err(crate::fsread::ReadError::Insecure(_)) => false,
        Err(_) => true,
    };
    Depth {
        depth: if ok { depth } else { 0 },
        forged: !ok,
    }
}

const EXPLICIT: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_ADMIN_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "OPENAI_API_BASE",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_KEY",
    "AZURE_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "PERPLEXITY_API_KEY",
    "XAI_API_KEY",
    "HUGGINGFACE_API_KEY",
    "HUGGING_FACE_HUB_TOKEN",
    "HF_TOKEN",
    "REPLICATE_API_TOKEN",
    "CURSOR_API_KEY",
    "GITHUB_COPILOT_TOKEN",
    "LM_STUDIO_API_KEY",
    "LMSTUDIO_API_KEY",
    "HUGGINGFACEHUB_API_TOKEN",
    "NVIDIA_API_KEY",
    "NGC_API_KEY",
    "LITELLM_MASTER_KEY",
    "LITELLM_API_KEY",
    "PORTKEY_API_KEY",
    "GH_COPILOT_TOKEN",
];

/// AI providers whose `<PROVIDER>_…_KEY`, `…_TOKEN` and `…_SECRET` variables are
/// scrubbed (docs/security.md lists them).
pub const PROVIDERS: &[&str] = &[
    "AI21",
    "AI_GATEWAY",
    "ANTHROPIC",
    "ANYSCALE",
    "AZURE_AI",
    "AZURE_OPENAI",
    "BASETEN",
    "BEDROCK",
    "CEREBRAS",
    "CLAUDE",
    "CODEX",
    "COHERE",
    "COPILOT",
    "CURSOR",
    "DASHSCOPE",
    "DEEPINFRA",
    "DEEPSEEK",
    "ELEVENLABS",
    "FIREWORKS",
    "GEMINI",
    "GITHUB_COPILOT",
    "GOOGLE",
    "GOOGLE_AI",
    "GROK",
    "GROQ",
    "HF",
    "HUGGINGFACE",
    "HUGGINGFACEHUB",
    "HUGGING_FACE",
    "HYPERBOLIC",
    "LEPTON",
    "LITELLM",
    "LMSTUDIO",
    "LM_STUDIO",
    "MISTRAL",
    "MOONSHOT",
    "NGC",
    "NOVITA",
    "NVIDIA",
    "OLLAMA",
    "OPENAI",
    "OPENROUTER",
    "PERPLEXITY",
    "PORTKEY",
    "PPLX",
    "REPLICATE",
    "SAMBANOVA",
    "TOGETHER",
    "TOGETHERAI",
    "VERTEX",
    "VERTEXAI",
    "VOYAGE",
    "XAI",
    "ZHIPU",
    // Added after a review found them reaching hooks.
    "GLM",
    "JINA",
    "KIMI",
    "MINIMAX",
    "NEBIUS",
    "QWEN",
    "SILICONFLOW",
    "UPSTAGE",
    "WRITER",
    "ZAI",
];

const SECRET_SUFFIXES: &[&str] = &["KEY", "TOKEN", "SECRET"];

/// Whether a variable name is an LLM provider credential that must never reach a hook.
///
/// Matches the explicit list, or (case-insensitively) `<PROVIDER>_…_<SUFFIX>` where the
/// last `_`-separated word is `KEY`, `TOKEN` or `SECRET` (so `OPENAI_ADMIN_KEY` and
/// `XAI_CLIENT_SECRET` are caught, `OPENAI_MODEL` is not).
pub fn is_llm_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if EXPLICIT.contains(&upper.as_str()) {
        return true;
    }
    let last_word = upper.rsplit('_').next().unwrap_or("");
    if !SECRET_SUFFIXES.contains(&last_word) {
        return false;
    }
    PROVIDERS.iter().any(|p| {
        upper
            .strip_prefix(p)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|rest| !rest.is_empty())
    })
}

/// Variables that reach user hooks but never project hooks: handles to services
/// outside the sandbox (an ssh agent, the session bus, a terminal multiplexer, a
/// display server).
pub const PROJECT_WITHHELD: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "DBUS_SESSION_BUS_ADDRESS",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
];

/// Whether a variable is withheld from project hooks ([`PROJECT_WITHHELD`]).
pub fn withheld_from_project(name: &str) -> bool {
    PROJECT_WITHHELD.contains(&name)
}

/// Exact names a `sessionStart` overlay may never set: they change how a shell or an
/// interpreter starts, where programs are found, or where a program reads its
/// configuration.
const OVERLAY_DENIED: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "ZDOTDIR",
    "INPUTRC",
    "SHELL",
    "HOME",
    "TMPDIR",
    "NODE_OPTIONS",
    "NODE_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RESOLV_HOST_CONF",
    "LESSOPEN",
    "LESSCLOSE",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "RUSTC_WRAPPER",
    "RUSTC",
    "CC",
    "CXX",
    "LUA_INIT",
    "LUA_PATH",
    "LUA_CPATH",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "GOFLAGS",
    "GOPATH",
    "GOROOT",
    "GOPROXY",
    "GOENV",
    "GOTOOLCHAIN",
    "KUBECONFIG",
    "GNUPGHOME",
    "LANG",
    "LANGUAGE",
    "PERLLIB",
    "PHPRC",
    "PHP_INI_SCAN_DIR",
    "TCLLIBPATH",
    "R_PROFILE",
    "R_PROFILE_USER",
    "R_ENVIRON",
    "R_ENVIRON_USER",
    "PS1",
    "PS2",
    "HISTFILE",
    "POSIXLY_CORRECT",
    "EXINIT",
    "VIMINIT",
    "MYVIMRC",
    "TERMINFO",
    "TERMINFO_DIRS",
    "TERMCAP",
    "TZDIR",
    "LIBRARY_PATH",
    "CPATH",
    "PKG_CONFIG_PATH",
    "MANPAGER",
    "BROWSER",
    "SUDO_ASKPASS",
    "CURL_HOME",
    "WGETRC",
    "NETRC",
    "GSETTINGS_BACKEND",
    "QT_PLUGIN_PATH",
];

/// Name prefixes a `sessionStart` overlay may never set (whole families of loader,
/// interpreter and tool configuration).
const OVERLAY_DENIED_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "PYTHON",
    "PERL5",
    "PERL_",
    "RUBY",
    "GEM_",
    "BUNDLE_",
    "GIT_",
    "SSH_",
    "COPSE_",
    "NPM_CONFIG_",
    "YARN_",
    "PNPM_",
    "DENO_",
    "BUN_",
    "CARGO_",
    "RUSTUP_",
    "XDG_",
    "MALLOC_",
    "DOCKER_",
    "GPG_",
    "LC_",
    "BASH_FUNC_",
    "NODE_",
    "JAVA_",
    "CORECLR_",
    "COMPLUS_",
    "DOTNET_",
    "ERL_",
    "ELIXIR_",
    "JULIA_",
    "OCAML",
    "GTK_",
];

/// Why a `sessionStart` overlay may not set `name`, or `None` when it may.
///
/// A deny list (not an allowlist): the vendors let a `sessionStart` hook export any
/// name, and the overlay only ever reaches hooks of the same scope and root that run
/// in the sandbox (see docs/security.md), so this list is a second line: it stops a
/// hook from changing how its siblings start.
pub fn overlay_refusal(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Some("not a valid variable name");
    }
    let upper = name.to_ascii_uppercase();
    if is_llm_secret(name) {
        return Some("an LLM provider credential");
    }
    if upper == DEPTH_VAR || upper == TOKEN_VAR {
        return Some("the recursion guard");
    }
    if OVERLAY_DENIED.contains(&upper.as_str())
        || OVERLAY_DENIED_PREFIXES.iter().any(|p| upper.starts_with(p))
        || withheld_from_project(&upper)
    {
        return Some("it changes how programs load or behave");
    }
    None
}

/// Whether a hook-returned environment overlay (a `sessionStart` `sessionEnv`, a
/// `CLAUDE_ENV_FILE` export, a shim session's stored overlay) may set `name`: the one
/// door every path that stores or applies an overlay goes through, so loader and
/// interpreter variables are refused the same way for every hook.
pub fn overlay_allowed(name: &str) -> bool {
    overlay_refusal(name).is_none()
}

/// The parent environment with LLM secrets and the depth variable removed.
pub fn scrubbed<I>(vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    vars.into_iter()
        .filter(|(k, _)| match k.to_str() {
            Some(name) => !is_llm_secret(name) && name != DEPTH_VAR && name != TOKEN_VAR,
            // A non-UTF-8 name cannot be a provider key we know; keep it.
            None => true,
        })
        .collect()
}

/// Parses a depth value: unset, unparseable or negative means 0.
pub fn parse_depth(value: Option<&OsStr>) -> u32 {
    value
        .and_then(OsStr::to_str)
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map(|d| d.clamp(0, i64::from(u32::MAX)) as u32)
        .unwrap_or(0)
}

/// Sets `name` to `value` in an environment list, replacing any earlier value.
#[inline]
pub fn set_var(env: &mut Vec<(OsString, OsString)>, name: &str, value: impl Into<OsString>) {
    let value = value.into();
    if let Some(slot) = env.iter_mut().find(|(k, _)| k == name) {
        slot.1 = value;
    } else {
        env.push((OsString::from(name), value));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_providers_a_review_found_reaching_hooks_are_scrubbed() {
        for name in [
            "AI_GATEWAY_API_KEY",
            "GLM_API_KEY",
            "QWEN_API_KEY",
            "KIMI_API_KEY",
            "MINIMAX_API_KEY",
            "SILICONFLOW_API_KEY",
            "NEBIUS_API_KEY",
            "JINA_API_KEY",
            "UPSTAGE_API_KEY",
            "WRITER_API_KEY",
            "ZAI_API_KEY",
            "GH_COPILOT_TOKEN",
        ] {
            assert!(super::is_llm_secret(name), "{name}");
        }
        // Tool tokens hooks legitimately use stay.
        for name in ["GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "WRITER_MODE"] {
            assert!(!super::is_llm_secret(name), "{name}");
        }
    }

    use super::*;

    #[test]
    fn provider_keys_are_secrets_tool_tokens_are_not() {
        for k in [
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "OPENAI_API_BASE",
            "HF_TOKEN",
            "GOOGLE_CLOUD_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "XAI_CLIENT_SECRET",
            "LM_STUDIO_API_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "ANTHROPIC_ADMIN_KEY",
            "OPENAI_ADMIN_KEY",
            "AZURE_OPENAI_KEY",
            "AZURE_API_KEY",
            "AWS_BEARER_TOKEN_BEDROCK",
            "CO_API_KEY",
            "HUGGING_FACE_HUB_TOKEN",
            "REPLICATE_API_TOKEN",
            "CURSOR_API_KEY",
            "GITHUB_COPILOT_TOKEN",
            "MOONSHOT_ACCESS_TOKEN",
            "HUGGINGFACEHUB_API_TOKEN",
            "HF_TOKEN",
            "NVIDIA_API_KEY",
            "NGC_API_KEY",
            "LITELLM_MASTER_KEY",
            "LITELLM_API_KEY",
            "PORTKEY_API_KEY",
            "OPENROUTER_API_KEY",
            "GROQ_API_KEY",
            "MISTRAL_API_KEY",
        ] {
            assert!(is_llm_secret(k), "{k} should be scrubbed");
        }
        for k in [
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PATH",
            "OPENAI_MODEL",
            "HFX_API_KEY",
            "OPENAI_TURKEY",
            "CURSOR_TRACE_ID",
        ] {
            assert!(!is_llm_secret(k), "{k} should stay");
        }
    }

    #[test]
    fn overlay_refuses_loader_and_interpreter_names() {
        for k in [
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "PATH",
            "BASH_ENV",
            "ENV",
            "SHELLOPTS",
            "BASHOPTS",
            "IFS",
            "PS4",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "NODE_PATH",
            "PERL5OPT",
            "RUBYOPT",
            "GIT_CONFIG_GLOBAL",
            "HOME",
            "TMPDIR",
            "SSH_AUTH_SOCK",
            "COPSE_DIR",
            "COPSE_HOOK_DEPTH",
            "ANTHROPIC_API_KEY",
            "ld_preload",
            "BASH_FUNC_ls%%",
            "NODE_EXTRA_CA_CERTS",
            "CORECLR_PROFILER_PATH",
            "PERLLIB",
            "A=B",
            "",
        ] {
            assert!(overlay_refusal(k).is_some(), "{k} should be refused");
        }
        for k in ["FEATURE", "PROJECT_ID", "API_BASE_URL", "MY_TOOL_MODE"] {
            assert_eq!(overlay_refusal(k), None, "{k} should pass");
            assert!(overlay_allowed(k));
        }
    }

    #[test]
    fn depth_parsing() {
        assert_eq!(parse_depth(None), 0);
        assert_eq!(parse_depth(Some(OsStr::new("2"))), 2);
        assert_eq!(parse_depth(Some(OsStr::new("-3"))), 0);
        assert_eq!(parse_depth(Some(OsStr::new("x"))), 0);
    }
}
