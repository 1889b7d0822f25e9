//! `copse-hooks doctor`: one screen with everything that decides whether hooks run.

use serde_json::{Value, json};

use crate::harness::Env;

/// Redacts what depends on the machine or the clock: run ids, UTC times, what the
/// kernel's sandbox enforces.
fn stable(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        // Sandbox layers depend on the machine's kernel: checked apart, not snapshotted.
        if line.starts_with("  enforced ") || line.starts_with("  NOT enforced ") {
            continue;
        }
        let mut words: Vec<String> = Vec::new();
        for w in line.split(' ') {
            let w = if w.starts_with('r')
                && w.len() > 20
                && w[1..].contains('-')
                && w[1..2].chars().all(|c| c.is_ascii_digit())
            {
                "[RUN]".to_owned()
            } else {
                w.to_owned()
            };
            words.push(w);
        }
        let mut line = words.join(" ");
        // `(YYYY-MM-DD HH:MM:SS UTC)`
        if let Some(i) = line.find("(20")
            && let Some(j) = line[i..].find(')')
        {
            line.replace_range(i..i + j + 1, "([TIME])");
        }
        let line = if line.starts_with("  Landlock") || line.starts_with("  none") {
            "  [SANDBOX STATUS]".to_owned()
        } else {
            line
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn setup(env: &Env) {
    let fail = env.script(
        "home/.cursor/fail.sh",
        "cat >/dev/null; echo 'cannot reach the lint server' >&2; exit 3",
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": fail.display().to_string(), "matcher": "lint"}],
                 "bogusEvent": [{"command": "true"}]}})
        .to_string(),
    );
    env.project_cursor(
        &json!({"version": 1, "hooks": {"stop": [{"command": "echo hi"}]}}).to_string(),
    );
}

#[test]
fn doctor_snapshots() {
    let env = Env::new();
    setup(&env);
    // A failure in one session, then a clean gate in a later one: doctor (and list)
    // still show the failure.
    env.cmd()
        .gate("run_shell", r#"{"command": "lint src"}"#)
        .success();
    env.cmd()
        .gate("run_shell", r#"{"command": "ls"}"#)
        .success();
    let human = env.cmd().args(["--enable", "doctor"]).run().success();
    insta::assert_snapshot!("doctor_human", stable(&human.redacted()));
    // Every sandbox layer is listed, enforced or not.
    assert!(
        human.stdout().contains("no hook process outlives its run"),
        "{}",
        human.stdout()
    );
    let out = env
        .cmd()
        .args(["--enable", "--json", "doctor"])
        .run()
        .success();
    let mut v: Value = out.json();
    assert_eq!(v["version"], 1);
    assert_eq!(v["enablement"], json!({"enabled": true, "source": "flag"}));
    assert_eq!(v["roots"][0]["trust"], "untrusted");
    let failures = v["recent_failures"].as_array().unwrap().clone();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0]["command"]
            .as_str()
            .unwrap()
            .ends_with("fail.sh")
    );
    // Redact the machine- and clock-dependent fields, then snapshot the shape.
    v["sandbox"] = json!("[SANDBOX]");
    v["recent_failures"][0]["run_id"] = json!("[RUN]");
    v["recent_failures"][0]["at"] = json!("[TIME]");
    let text = serde_json::to_string_pretty(&v).unwrap();
    insta::assert_snapshot!("doctor_json", crate::harness::redact(&text, &env.root()));
    let list = env
        .cmd()
        .args(["--enable", "--json", "list"])
        .run()
        .success()
        .json();
    let hook = list["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["command"].as_str().unwrap().ends_with("fail.sh"))
        .unwrap();
    assert_eq!(hook["last_error"], failures[0]["message"]);
}

#[test]
fn doctor_says_hooks_are_off() {
    let env = Env::new();
    let out = env.cmd().args(["doctor"]).run().success();
    assert!(
        out.stdout()
            .contains("OFF (from default): turn them on with `copse-hooks enable`"),
        "{}",
        out.stdout()
    );
}

#[test]
fn doctor_escapes_hostile_text_and_honours_color() {
    let env = Env::new();
    let fail = env.script("home/.cursor/fail.sh", "cat >/dev/null; exit 1");
    // The command carries an escape sequence (in a shell comment), an event name
    // another one and a bidi override.
    let command = format!("{} # \u{1b}]0;pwned\u{7}", fail.display());
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": command}],
            "boom\u{1b}[2J\u{202e}gone": [{"command": "true"}],
        }})
        .to_string(),
    );
    env.cmd()
        .gate("run_shell", r#"{"command": "ls"}"#)
        .success();
    for color in ["never", "always"] {
        let out = env
            .cmd()
            .args(["--enable", "--color", color, "doctor"])
            .run()
            .success();
        let stdout = out.stdout();
        assert!(stdout.contains("boom\\x1b[2J\\u{202e}gone"), "{stdout}");
        assert!(stdout.contains("# \\x1b]0;pwned\\x07"), "{stdout}");
        assert!(!stdout.contains("\u{1b}[2J") && !stdout.contains('\u{202e}'));
        assert!(!stdout.contains("\u{1b}]0;"));
        // Colours only when asked for: the escapes left are the CLI's own styles.
        assert_eq!(stdout.contains('\u{1b}'), color == "always", "{stdout}");
    }
}

#[test]
fn doctor_shows_the_otlp_export_and_what_is_wrong_with_its_variables() {
    let env = Env::new();
    // Nothing set: no section at all.
    let out = env.cmd().args(["--json", "doctor"]).run().success();
    assert!(out.json().get("otel").is_none(), "{}", out.stdout());
    // An endpoint: export is on, to its traces URL, with this process's counters.
    let out = env
        .cmd()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .args(["--json", "doctor"])
        .run()
        .success();
    let otel = &out.json()["otel"];
    assert_eq!(otel["traces_url"], "http://127.0.0.1:4318/v1/traces");
    assert_eq!(otel["dropped"], 0);
    let warnings = otel["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("grpc")),
        "{otel}"
    );
    let human = env
        .cmd()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .args(["doctor"])
        .run()
        .success()
        .stdout();
    assert!(
        human.contains("every blocking gate is exported to http://127.0.0.1:4318/v1/traces"),
        "{human}"
    );
    assert!(human.contains("0 exported, 0 dropped"), "{human}");
    // An endpoint that is not a URL: export stays off and doctor says why, escaped.
    let out = env
        .cmd()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url \u{1b}[31m")
        .args(["doctor"])
        .run()
        .success()
        .stdout();
    assert!(out.contains("OTLP export"), "{out}");
    assert!(
        !out.contains('\u{1b}'),
        "escape sequences reach the terminal: {out}"
    );
}
