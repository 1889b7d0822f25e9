//! `copse-hooks ui`: the command starts the server, prints its address, and serves.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

use crate::harness::Env;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ui(env: &Env, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copse-hooks"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("COPSE_DIR", env.copse_dir())
        .env("NO_COLOR", "1")
        .current_dir(env.workspace())
        .arg("ui")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn get(port: u16, host: &str, path: &str) -> String {
    request(port, host, "GET", path, "")
}

/// One HTTP request written by hand (`headers` end in `\r\n` each); the whole answer.
fn request(port: u16, host: &str, method: &str, path: &str, headers: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// `http://127.0.0.1:PORT/?code=CODE` → (port, code).
fn login_parts(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, code) = rest.split_once("/?code=").unwrap();
    assert_eq!(code.len(), 32, "{url}");
    assert!(code.bytes().all(|b| b.is_ascii_hexdigit()), "{url}");
    (port.parse().unwrap(), code.to_string())
}

/// Spends a sign-in code as a browser does: the session cookie (`name=secret`).
fn sign_in(port: u16, code: &str) -> Result<String, String> {
    let host = format!("127.0.0.1:{port}");
    let answer = get(port, &host, &format!("/?code={code}"));
    if !answer.starts_with("HTTP/1.1 303") {
        return Err(answer);
    }
    let set = answer
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("no cookie: {answer}"));
    Ok(set.split(';').next().unwrap().to_string())
}

#[test]
fn ui_prints_its_address_and_serves_the_page() {
    let env = Env::new();
    env.project_cursor(r#"{"version": 1, "hooks": {"stop": [{"command": "true"}]}}"#);
    let mut child = Killed(ui(&env, &["--no-open"]).spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let third = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("copse-hooks ui: ").unwrap();
    let (port, code) = login_parts(url);
    assert_ne!(port, 0);
    insta::assert_snapshot!(format!(
        "{}\n{second}\n{third}",
        first
            .replace(&code, "[CODE]")
            .replace(&port.to_string(), "[PORT]")
    ));

    let host = format!("127.0.0.1:{port}");
    // A DNS-rebinding name is refused before the code is looked at.
    let rebound = get(
        port,
        &format!("attacker.example:{port}"),
        &format!("/?code={code}"),
    );
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    let cookie = sign_in(port, &code).unwrap();
    let with_cookie = format!("Cookie: {cookie}\r\n");
    let page = request(port, &host, "GET", "/api/overview", &with_cookie);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(&env.workspace().display().to_string()));
    let refused = get(port, &host, "/api/overview");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let sources = request(port, &host, "GET", "/api/sources", &with_cookie);
    assert!(sources.contains("\"command\":\"true\""), "{sources}");

    // Ctrl-C stops the server even while a page holds its live-update stream open.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {host}\r\n{with_cookie}\r\n"
    )
    .unwrap();
    let mut first = [0u8; 64];
    let n = stream.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    let pid = child.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut status = None;
    for _ in 0..300 {
        if let Some(s) = child.0.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        status.and_then(|s| s.code()),
        // The CLI's signal handling: the audit store is flushed and the command exits
        // with 128 + SIGINT, as every command does.
        Some(130),
        "ui did not stop on SIGINT"
    );
}

/// Waits (bounded, to catch a hang) until the fake opener has written its argv.
fn recorded_argv(file: &std::path::Path) -> Vec<String> {
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(file)
            && text.ends_with("END\n")
        {
            return text
                .lines()
                .take_while(|l| *l != "END")
                .map(String::from)
                .collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the browser opener was not started");
}

/// The attack: any local process (a hook too) reads the browser opener's argv from
/// `/proc/PID/cmdline`. Before, it held the page's lasting token, and with it a
/// sandboxed hook trusted a workspace through `/api/trust`. Now it holds a one-time
/// code the page has spent by the time anyone could read it.
#[test]
fn the_browser_opener_gets_only_a_one_time_code() {
    let env = Env::new();
    env.project_cursor(r#"{"version": 1, "hooks": {"stop": [{"command": "true"}]}}"#);
    let argv_file = env.root().join("opener-argv");
    // Both ways of naming the opener: `$BROWSER`, and `xdg-open` in a graphical session.
    let opener = env.script(
        "bin/opener",
        &format!(
            "for a in \"$0\" \"$@\"; do echo \"$a\"; done > {0}.tmp; echo END >> {0}.tmp; mv {0}.tmp {0}",
            argv_file.display()
        ),
    );
    std::fs::copy(&opener, env.root().join("bin/xdg-open")).unwrap();
    let path = format!(
        "{}:{}",
        env.root().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for how in ["BROWSER", "xdg-open"] {
        let _ = std::fs::remove_file(&argv_file);
        let mut cmd = ui(&env, &[]);
        cmd.env("PATH", &path);
        match how {
            "BROWSER" => cmd.env("BROWSER", &opener),
            _ => cmd.env("DISPLAY", ":99"),
        };
        let mut child = Killed(cmd.spawn().unwrap());
        let stdout = child.0.stdout.take().unwrap();
        // Kept open: the command prints more lines before it starts the opener.
        let mut lines = BufReader::new(stdout).lines();
        let printed = lines.next().unwrap().unwrap();
        let (port, printed_code) = login_parts(printed.strip_prefix("copse-hooks ui: ").unwrap());
        let argv = recorded_argv(&argv_file);
        // The opener got exactly one argument: a sign-in address, with its own code.
        assert_eq!(argv.len(), 2, "{how}: {argv:?}");
        let (argv_port, code) = login_parts(&argv[1]);
        assert_eq!(argv_port, port);
        assert_ne!(
            code, printed_code,
            "{how}: the printed code went to the opener"
        );
        // The browser loads the page: the code becomes a session cookie.
        let cookie = sign_in(port, &code).unwrap();
        let secret = cookie.split_once('=').unwrap().1;
        assert!(!argv.iter().any(|a| a.contains(secret)));
        // A hook that read the opener's argv now replays it: refused, no cookie.
        let replay = sign_in(port, &code).unwrap_err();
        assert!(replay.starts_with("HTTP/1.1 403"), "{how}: {replay}");
        assert!(replay.contains("already used"), "{replay}");
        assert!(!replay.to_ascii_lowercase().contains("set-cookie"));
        // Nor does the code itself open the API, or pass for a cookie.
        let host = format!("127.0.0.1:{port}");
        let as_token = get(
            port,
            &host,
            &format!("/api/overview?token={code}&code={code}"),
        );
        assert!(as_token.starts_with("HTTP/1.1 403"), "{as_token}");
        let as_cookie = request(
            port,
            &host,
            "GET",
            "/api/overview",
            &format!("Cookie: copse-hooks-{port}={code}\r\n"),
        );
        assert!(as_cookie.starts_with("HTTP/1.1 403"), "{as_cookie}");
        // Control: the browser's session works, and the printed code still signs in.
        let with_cookie = format!("Cookie: {cookie}\r\n");
        let ok = request(port, &host, "GET", "/api/overview", &with_cookie);
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(sign_in(port, &printed_code).is_ok());
        // Trusting needs the nonce of a page this session loaded.
        let trust = request(port, &host, "POST", "/api/trust", &with_cookie);
        assert!(trust.starts_with("HTTP/1.1 403"), "{trust}");
        assert!(trust.contains("X-Copse-Nonce"), "{trust}");
    }
}

#[test]
fn ui_on_a_port_in_use_fails_clearly() {
    let env = Env::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = ui(&env, &["--no-open", "--port", &port]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).replace(&port, "[PORT]");
    insta::assert_snapshot!(err.split(": Address").next().unwrap_or(&err));
}

/// The JSON body of a whole HTTP answer, after its status line was checked.
fn json_body(answer: &str) -> serde_json::Value {
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// Trusting from the page keeps the pinned bytes as `copse-hooks trust` does: after
/// an edit, `copse-hooks trust --diff` shows the removed and added lines, not "no copy
/// of the pinned content was kept".
#[test]
fn trusting_from_the_page_keeps_copies_for_trust_diff() {
    let env = Env::new();
    env.script(
        "ws/.cursor/hooks/guard.sh",
        "cat >/dev/null\necho '{\"permission\":\"allow\"}'",
    );
    env.project_cursor(
        r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/hooks/guard.sh"}]}}"#,
    );
    let mut child = Killed(ui(&env, &["--no-open"]).spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let first = BufReader::new(stdout).lines().next().unwrap().unwrap();
    let (port, code) = login_parts(first.strip_prefix("copse-hooks ui: ").unwrap());
    let host = format!("127.0.0.1:{port}");
    let cookie = format!("Cookie: {}\r\n", sign_in(port, &code).unwrap());
    let ws = env.workspace().canonicalize().unwrap();
    let nonce = json_body(&request(port, &host, "GET", "/api/nonce", &cookie));
    let preview = json_body(&request(
        port,
        &host,
        "GET",
        &format!("/api/trust/preview?dir={}", ws.display()),
        &cookie,
    ));
    let body = serde_json::json!({"dir": ws, "fingerprint": preview["fingerprint"]}).to_string();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /api/trust HTTP/1.1\r\nHost: {host}\r\n{cookie}X-Copse-Nonce: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        nonce["nonce"].as_str().unwrap(),
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let trusted = json_body(&answer);
    assert_eq!(trusted["trusted"], ws.display().to_string(), "{trusted}");
    drop(child);

    let r = env.cmd().args(["trust", "--diff"]).run().success();
    assert!(r.stdout().contains("Nothing changed"), "{}", r.stdout());
    let script = ws.join(".cursor/hooks/guard.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, text.replace("allow", "deny")).unwrap();
    let r = env.cmd().args(["trust", "--diff"]).run().success();
    let out = r.stdout();
    assert!(!out.contains("no copy"), "{out}");
    assert!(
        out.contains("-echo '{\"permission\":\"allow\"}'\n+echo '{\"permission\":\"deny\"}'\n"),
        "{out}"
    );
}
