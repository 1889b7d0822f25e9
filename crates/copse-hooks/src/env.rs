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

const EXPLICIT: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_API_BASE",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "COHERE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "PERPLEXITY_API_KEY",
    "XAI_API_KEY",
    "HUGGINGFACE_API_KEY",
    "HF_TOKEN",
    "LM_STUDIO_API_KEY",
    "LMSTUDIO_API_KEY",
];

const PROVIDERS: &[&str] = &[
    "ANTHROPIC",
    "OPENAI",
    "AZURE_OPENAI",
    "GEMINI",
    "GOOGLE",
    "MISTRAL",
    "GROQ",
    "TOGETHER",
    "FIREWORKS",
    "COHERE",
    "DEEPSEEK",
    "OPENROUTER",
    "PERPLEXITY",
    "XAI",
    "HUGGINGFACE",
    "HF",
    "LM_STUDIO",
    "LMSTUDIO",
];

const SECRET_SUFFIXES: &[&str] = &["API_KEY", "AUTH_TOKEN", "API_TOKEN", "SECRET"];

/// Whether a variable name is an LLM provider credential that must never reach a hook.
///
/// Matches the explicit list, or (case-insensitively) `<PROVIDER>_…<SUFFIX>` where the
/// suffix is `API_KEY`, `AUTH_TOKEN`, `API_TOKEN` or `SECRET`.
pub fn is_llm_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if EXPLICIT.contains(&upper.as_str()) {
        return true;
    }
    PROVIDERS.iter().any(|p| {
        upper
            .strip_prefix(p)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|rest| SECRET_SUFFIXES.iter().any(|s| rest.ends_with(s)))
    })
}

/// The parent environment with LLM secrets and the depth variable removed.
pub fn scrubbed<I>(vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    vars.into_iter()
        .filter(|(k, _)| match k.to_str() {
            Some(name) => !is_llm_secret(name) && name != DEPTH_VAR,
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
        ] {
            assert!(!is_llm_secret(k), "{k} should stay");
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
