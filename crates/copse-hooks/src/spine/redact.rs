//! Redaction of well-known secret token shapes from what the audit store keeps.
//!
//! Prompts, tool inputs and hook output often carry credentials; the store keeps them
//! for weeks. Before a record is written, each shape below is replaced by
//! `[REDACTED:<kind>]` and the count kept on the record (`redactions`). The shapes
//! are the published formats of each issuer's keys; a secret of another shape is not
//! caught (docs/audit.md says so). A setting (`redactSecrets: false`) turns it off.

use std::sync::OnceLock;

use regex::bytes::Regex;

use super::RunRecord;

/// (kind, pattern) of every shape redacted.
const SHAPES: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    ),
    ("anthropic", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        "openai",
        r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
    ),
    (
        "github",
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("aws", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("slack", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google", r"AIza[0-9A-Za-z_\-]{35}"),
];

fn compiled() -> &'static [(&'static str, Regex)] {
    static SET: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    SET.get_or_init(|| {
        SHAPES
            .iter()
            .filter_map(|(kind, pattern)| Regex::new(pattern).ok().map(|r| (*kind, r)))
            .collect()
    })
}

/// Redacts every known secret shape in `bytes`; returns how many were replaced.
pub fn redact_bytes(bytes: &mut Vec<u8>) -> u64 {
    let mut count = 0;
    for (kind, re) in compiled() {
        if !re.is_match(bytes) {
            continue;
        }
        let replacement = format!("[REDACTED:{kind}]");
        let mut n = 0;
        let out = re
            .replace_all(bytes, |_: &regex::bytes::Captures<'_>| {
                n += 1;
                replacement.as_bytes().to_vec()
            })
            .into_owned();
        *bytes = out;
        count += n;
    }
    count
}

fn redact_text(text: &mut String) -> u64 {
    let mut bytes = std::mem::take(text).into_bytes();
    let n = redact_bytes(&mut bytes);
    *text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    n
}

/// Redacts the record's streams and outcome texts, adding to its `redactions`.
pub(crate) fn redact_record(rec: &mut RunRecord) {
    let mut n = 0;
    for stream in [&mut rec.stdin, &mut rec.stdout, &mut rec.stderr] {
        n += redact_bytes(stream);
    }
    for text in [
        &mut rec.agent_message,
        &mut rec.user_message,
        &mut rec.halt_reason,
        &mut rec.inject_context,
        &mut rec.updated_input,
        &mut rec.queued_message,
        &mut rec.failure_message,
    ]
    .into_iter()
    .flatten()
    {
        n += redact_text(text);
    }
    rec.redactions += n;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_is_redacted_and_counted() {
        let secrets = [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-1234567890-abcdefghij",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        ];
        for s in secrets {
            let mut b = format!("before {s} after").into_bytes();
            assert_eq!(redact_bytes(&mut b), 1, "{s}");
            let text = String::from_utf8(b).unwrap();
            assert!(
                text.starts_with("before [REDACTED:") && text.ends_with("] after"),
                "{text}"
            );
        }
        let mut plain = b"git push --force origin main; sk-short".to_vec();
        assert_eq!(redact_bytes(&mut plain), 0);
    }
}
