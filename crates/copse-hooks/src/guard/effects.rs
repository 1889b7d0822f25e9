//! What a tool call would do, as effects the rules judge: "deletes `~`", "sends a
//! secret to `203.0.113.9`", "runs what it downloads".
//!
//! A shell command is first analysed ([`super::shell`]); each simple command it would
//! run then yields effects from what the program is known to do with its words
//! (`rm` deletes its operands, `curl -d @f` sends `f`, `crontab -` schedules, …), and
//! data flow is followed where a command line makes it plain: through pipelines
//! (`cat key | curl -d @- …`), substitutions (`curl "…?k=$(base64 key)"`), files
//! written and then sent or run (`zip x.zip ~/.ssh && curl -F f=@x.zip …`,
//! `curl -o i.sh … && bash i.sh`). File tools and MCP tools yield the same effects
//! from their arguments, so one rule covers every way of doing the thing.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::paths::Paths;
use super::shell::{self, Analysis, Cmd, RedirectKind, Via};

/// One thing a call would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Effect {
    pub kind: Kind,
    /// The path it acts on, normalised (see [`Paths::normalize`]).
    pub path: Option<String>,
    /// The network host it talks to.
    pub host: Option<String>,
    /// What data it carries to the network: `secret`, `env`, `file`, `history`.
    pub carries: BTreeSet<&'static str>,
    /// A kind-specific detail a rule may match: the branch of a force push, the
    /// package of an install, the verb of an MCP tool.
    pub detail: String,
    /// The normalised simple command (or the tool and argument) it came from.
    pub subject: String,
}

/// The kinds of effect; their names are what rules' `effect` lists say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Delete,
    Wipe,
    Chmod,
    Read,
    Write,
    Send,
    Fetch,
    FetchExec,
    DecodeExec,
    EnvDump,
    SecretVar,
    Credential,
    Schedule,
    GitConfig,
    ForcePush,
    HardReset,
    Publish,
    Teardown,
    SqlDrop,
    PackageSource,
    Install,
    RunPackage,
    CopseOff,
    AgentBypass,
    Container,
    KillAll,
    SecretData,
    DynamicCommand,
    Unseen,
    ToolVerb,
    Account,
    /// Runs a script the agent wrote in an earlier call of the session (the guard never
    /// saw what it does).
    RunWritten,
    /// Opens the network to a host the code assembles from pieces.
    HostBuilt,
}

/// Every kind with its name, in one table.
pub(crate) const KINDS: &[(Kind, &str)] = &[
    (Kind::Delete, "delete"),
    (Kind::Wipe, "wipe"),
    (Kind::Chmod, "chmod"),
    (Kind::Read, "read"),
    (Kind::Write, "write"),
    (Kind::Send, "send"),
    (Kind::Fetch, "fetch"),
    (Kind::FetchExec, "fetch-exec"),
    (Kind::DecodeExec, "decode-exec"),
    (Kind::EnvDump, "env-dump"),
    (Kind::SecretVar, "secret-var"),
    (Kind::Credential, "credential"),
    (Kind::Schedule, "schedule"),
    (Kind::GitConfig, "git-config"),
    (Kind::ForcePush, "force-push"),
    (Kind::HardReset, "hard-reset"),
    (Kind::Publish, "publish"),
    (Kind::Teardown, "teardown"),
    (Kind::SqlDrop, "sql-drop"),
    (Kind::PackageSource, "package-source"),
    (Kind::Install, "install"),
    (Kind::RunPackage, "run-package"),
    (Kind::CopseOff, "copse-off"),
    (Kind::AgentBypass, "agent-bypass"),
    (Kind::Container, "container"),
    (Kind::KillAll, "kill-all"),
    (Kind::SecretData, "secret-data"),
    (Kind::DynamicCommand, "dynamic-command"),
    (Kind::Unseen, "unseen"),
    (Kind::ToolVerb, "tool-verb"),
    (Kind::Account, "account"),
    (Kind::RunWritten, "run-written"),
    (Kind::HostBuilt, "host-built"),
];

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        KINDS.iter().find(|(_, n)| *n == s).map(|(k, _)| *k)
    }
}

/// The effects of one call and the shell commands it would run.
#[derive(Debug, Default)]
pub(crate) struct CallEffects {
    pub effects: Vec<Effect>,
    /// The script files its shell commands run (normalised).
    pub executed: Vec<String>,
    /// Every simple command, as a line of normalised words (for `command` globs).
    pub lines: Vec<String>,
}

impl CallEffects {
    /// Records that the call runs `path`, a file the session wrote earlier.
    pub(crate) fn run_written(&mut self, path: String) {
        let subject = format!("run {path}");
        self.path(Kind::RunWritten, path, &subject);
    }

    /// The files the call writes.
    pub(crate) fn written_paths(&self) -> Vec<String> {
        self.effects
            .iter()
            .filter(|e| e.kind == Kind::Write)
            .filter_map(|e| e.path.clone())
            .collect()
    }

    fn push(&mut self, kind: Kind, subject: &str) -> &mut Effect {
        self.effects.push(Effect {
            kind,
            path: None,
            host: None,
            carries: BTreeSet::new(),
            detail: String::new(),
            subject: subject.to_string(),
        });
        let last = self.effects.len() - 1;
        &mut self.effects[last]
    }

    fn path(&mut self, kind: Kind, path: String, subject: &str) {
        self.push(kind, subject).path = Some(path);
    }
}

/// The effects of a tool call (canonical tool name and input).
pub(crate) fn of_call(tool: &str, input: &Map<String, Value>, paths: &Paths) -> CallEffects {
    let mut out = CallEffects::default();
    let s = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or("");
    // A file tool's path is not expanded by a shell, but agents write `$HOME` in it.
    // The canonical key is `path`; the vendors' own keys are read too, so a call that
    // reached us in an agent's keys is judged all the same.
    let home_path = |k: &str| {
        let p = [k, "file_path", "absolute_path", "filePath", "target_file"]
            .iter()
            .map(|k| s(k))
            .find(|v| !v.is_empty())
            .unwrap_or("");
        p.replace("${HOME}", "~").replacen("$HOME", "~", 1)
    };
    match tool {
        "run_shell" => {
            let cwd = s("cwd");
            if cwd.is_empty() {
                shell_effects(s("command"), paths, &mut out, 0);
            } else {
                let p = Paths::new(
                    &paths.home,
                    &paths.normalize(cwd).replacen('~', &paths.home, 1),
                    &paths.copse_dir.replacen('~', &paths.home, 1),
                    &roots_abs(paths),
                );
                shell_effects(s("command"), &p, &mut out, 0);
            }
        }
        "read_file" => {
            let p = paths.normalize(&home_path("path"));
            let subject = format!("read {p}");
            out.path(Kind::Read, p, &subject);
        }
        "write_file" | "str_replace" => {
            let p = paths.normalize(&home_path("path"));
            let subject = format!("write {p}");
            let content = if tool == "write_file" {
                s("content")
            } else {
                s("new_str")
            };
            written_content(&p, content, paths, &mut out, &subject);
            out.path(Kind::Write, p, &subject);
        }
        "delete_file" => {
            let p = paths.normalize(&home_path("path"));
            let subject = format!("delete {p}");
            out.path(Kind::Delete, p, &subject);
        }
        // Copilot CLI types into a running shell session: what it types is a command.
        "write_bash" => shell_effects(s("input"), paths, &mut out, 0),
        // Codex's and Copilot's patch tool: each file it adds, updates, moves or
        // deletes, with the lines it adds as the written content.
        "apply_patch" => {
            let text = ["command", "input", "patch"]
                .iter()
                .map(|k| s(k))
                .find(|t| !t.is_empty())
                .unwrap_or("");
            patch_effects(text, paths, &mut out);
        }
        t if t.starts_with("mcp__") => mcp_effects(t, input, paths, &mut out),
        _ => {}
    }
    out
}

/// The effects of an `apply_patch` envelope (`*** Add File: P`, `*** Update File: P`,
/// `*** Move to: P`, `*** Delete File: P`; `+` lines are what it writes).
fn patch_effects(text: &str, paths: &Paths, out: &mut CallEffects) {
    let mut current: Option<(String, String)> = None;
    let flush = |cur: &mut Option<(String, String)>, out: &mut CallEffects| {
        if let Some((p, content)) = cur.take() {
            let subject = format!("write {p}");
            written_content(&p, &content, paths, out, &subject);
            out.path(Kind::Write, p, &subject);
        }
    };
    for line in text.lines() {
        let header = |prefix: &str| line.strip_prefix(prefix).map(str::trim);
        if let Some(p) = header("*** Add File:")
            .or_else(|| header("*** Update File:"))
            .or_else(|| header("*** Move to:"))
        {
            flush(&mut current, out);
            current = Some((paths.normalize(p), String::new()));
        } else if let Some(p) = header("*** Delete File:") {
            flush(&mut current, out);
            let p = paths.normalize(p);
            let subject = format!("delete {p}");
            out.path(Kind::Delete, p, &subject);
        } else if let (Some(added), Some((_, content))) = (line.strip_prefix('+'), current.as_mut())
        {
            content.push_str(added);
            content.push('\n');
        }
    }
    flush(&mut current, out);
}

fn roots_abs(paths: &Paths) -> Vec<String> {
    paths
        .roots
        .iter()
        .map(|r| r.replacen('~', &paths.home, usize::from(r.starts_with('~'))))
        .collect()
}

/// What writing `content` to `path` implies beyond the write: a package index named
/// in a package manager's config.
fn written_content(
    path: &str,
    content: &str,
    _paths: &Paths,
    out: &mut CallEffects,
    subject: &str,
) {
    let name = path.rsplit('/').next().unwrap_or(path);
    if matches!(
        name,
        ".npmrc"
            | ".yarnrc"
            | ".yarnrc.yml"
            | "pip.conf"
            | "pip.ini"
            | ".pypirc"
            | "uv.toml"
            | ".condarc"
    ) && let Some(host) = registry_in(content)
    {
        let e = out.push(Kind::PackageSource, subject);
        e.host = Some(host);
        e.path = Some(path.to_string());
    }
}

/// A registry or index URL's host in a package manager's config text.
fn registry_in(content: &str) -> Option<String> {
    for line in content.lines() {
        let l = line.trim().to_ascii_lowercase();
        if [
            "registry",
            "index-url",
            "index_url",
            "extra-index-url",
            "npmregistryserver",
            "url",
            "channels",
        ]
        .iter()
        .any(|k| l.contains(k))
            && let Some(h) = url_host(line.trim())
        {
            return Some(h);
        }
    }
    None
}

/// The host of the first URL in `text`.
pub(crate) fn url_host(text: &str) -> Option<String> {
    let start = text.find("://")?;
    let rest = &text[start + 3..];
    let host = rest
        .split(['/', '?', '#', '"', '\'', ' ', '\\'])
        .next()?
        .rsplit('@')
        .next()?;
    let host = if host.starts_with('[') {
        host.split(']').next().map(|h| h.trim_start_matches('['))?
    } else {
        host.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

// ---------------------------------------------------------------------------------
// Shell

/// What flows out of a command: the carried classes.
type Carried = BTreeSet<&'static str>;

struct Flow<'a> {
    paths: &'a Paths,
    analysis: &'a Analysis,
    /// Per command index: what its output carries.
    output: Vec<Carried>,
    /// Files written by this command line and what they carry.
    tainted: HashMap<String, Carried>,
    /// Files downloaded by this command line (normalised path → host).
    downloaded: HashMap<String, String>,
    /// Remotes added by this command line (`git remote add`).
    remotes: HashMap<String, String>,
}

fn shell_effects(text: &str, paths: &Paths, out: &mut CallEffects, depth: u8) {
    if text.trim().is_empty() || depth > 2 {
        return;
    }
    let analysis = shell::analyze(text, paths);
    out.executed.extend(analysis.executed.iter().cloned());
    if analysis.truncated {
        out.push(Kind::Unseen, text);
    }
    if fork_bomb(text) {
        out.push(Kind::KillAll, text);
    }
    // `cd DIR` (or `pushd DIR`) moves the directory later relative paths are read
    // against: `cd ~/.ssh && cat id_rsa` reads the key. A static `cd` as a command of
    // its own moves it for the commands after it; a dynamic one leaves it as it was.
    let mut dirs: Vec<Paths> = Vec::new();
    for cmd in &analysis.commands {
        if moves_dir(cmd) {
            let base = dirs.last().unwrap_or(paths);
            let cwd = base.abs(&base.normalize(&cmd.args()[0].text));
            let roots: Vec<String> = base.roots.iter().map(|r| base.abs(r)).collect();
            dirs.push(Paths::new(
                &base.home,
                &cwd,
                &base.abs(&base.copse_dir),
                &roots,
            ));
        }
    }
    let mut flow = Flow {
        paths,
        analysis: &analysis,
        output: vec![Carried::new(); analysis.commands.len()],
        tainted: HashMap::new(),
        downloaded: HashMap::new(),
        remotes: HashMap::new(),
    };
    let mut moved = 0usize;
    for (i, cmd) in analysis.commands.iter().enumerate() {
        let line = cmd.line();
        if !cmd.argv.is_empty() {
            out.lines.push(line.clone());
        }
        flow.paths = moved
            .checked_sub(1)
            .and_then(|d| dirs.get(d))
            .unwrap_or(paths);
        flow.command(i, cmd, &line, out, depth);
        if moves_dir(cmd) {
            moved += 1;
        }
    }
}

/// Whether `cmd` is a `cd`/`pushd` to one static directory, outside a pipeline.
fn moves_dir(cmd: &shell::Cmd) -> bool {
    matches!(cmd.program(), "cd" | "pushd")
        && cmd.pipe.1 == 0
        && cmd.args().len() == 1
        && !cmd.args()[0].dynamic
        && !cmd.args()[0].text.starts_with('-')
}

/// `:(){ :|:& };:` and its renamings: a function that pipes itself into itself in the
/// background.
fn fork_bomb(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(def) = t.find("(){") else {
        return false;
    };
    let name_start = t[..def].rfind([';', '&', '|', '\n']).map_or(0, |p| p + 1);
    let name = &t[name_start..def];
    !name.is_empty() && t[def..].contains(&format!("{name}|{name}&"))
}

const NO_READ: &[&str] = &[
    "ls",
    "stat",
    "echo",
    "printf",
    "mkdir",
    "test",
    "[",
    "du",
    "realpath",
    "dirname",
    "basename",
    "touch",
    "which",
    "type",
    "cd",
    "pushd",
    "export",
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "chmod",
    "chown",
    "chgrp",
    "file",
    "readlink",
    "ln",
    "mv",
    "git",
    "exit",
    "true",
    "false",
    "sleep",
    "wc",
    "df",
    "find",
    "tree",
    "code",
    "vim",
    "nano",
    "ssh-keygen",
    "ssh-add",
];

impl Flow<'_> {
    fn norm(&self, word: &str) -> String {
        self.paths.normalize(word)
    }

    /// What the commands of `subst` produce (the data their output carries).
    fn subst_carried(&self, subst: &[usize]) -> Carried {
        let mut c = Carried::new();
        for &i in subst {
            if let Some(o) = self.output.get(i) {
                c.extend(o.iter().copied());
            }
        }
        c
    }

    /// What the upstream stages of `cmd`'s pipeline feed it.
    fn upstream(&self, cmd: &Cmd) -> Carried {
        let mut c = Carried::new();
        for (i, _) in self.analysis.upstream(cmd.pipe.0, cmd.pipe.1) {
            c.extend(self.output[i].iter().copied());
        }
        c
    }

    fn upstream_has(&self, cmd: &Cmd, pred: impl Fn(&Cmd) -> bool) -> bool {
        self.analysis
            .upstream(cmd.pipe.0, cmd.pipe.1)
            .any(|(_, c)| pred(c))
    }

    /// What reading `path` puts in the data.
    fn carried_by_path(&self, path: &str) -> Carried {
        let mut c = Carried::new();
        let classes = self.paths.classes(path);
        if classes.secret {
            c.insert("secret");
        }
        if path.ends_with("/environ") && path.starts_with("/proc/") {
            c.insert("env");
        }
        if path.ends_with("_history") || path.ends_with("/.history") {
            c.insert("history");
        }
        if classes.home
            || classes.root
            || path == "~/.ssh"
            || path == "~/.aws"
            || path == "~/.gnupg"
            || path == "~/.config"
            || path == "~/.kube"
        {
            c.insert("secret");
        }
        if let Some(t) = self.tainted.get(path) {
            c.extend(t.iter().copied());
        }
        c.insert("file");
        c
    }

    #[allow(clippy::too_many_lines)] // one table of programs, read top to bottom
    fn command(&mut self, i: usize, cmd: &Cmd, line: &str, out: &mut CallEffects, depth: u8) {
        let program = cmd.program().to_string();
        let words: Vec<String> = cmd.args().iter().map(|a| a.text.clone()).collect();
        let operands: Vec<&String> = words.iter().filter(|w| !w.starts_with('-')).collect();
        let mut produced = Carried::new();

        // A program name that is not known before the command runs.
        if let Some(first) = cmd.argv.first()
            && first.dynamic
            && first.text.contains('$')
        {
            out.push(Kind::DynamicCommand, line);
        }
        // Assignments that switch copse off for what follows.
        for (k, _) in &cmd.assigns {
            if k.starts_with("COPSE_") {
                out.push(Kind::CopseOff, line).detail = k.clone();
            }
        }
        if matches!(program.as_str(), "unset") && words.iter().any(|w| w.starts_with("COPSE_")) {
            out.push(Kind::CopseOff, line);
        }
        // Redirections.
        for r in &cmd.redirects {
            let target = &r.target.text;
            if let Some(rest) = target
                .strip_prefix("/dev/tcp/")
                .or_else(|| target.strip_prefix("/dev/udp/"))
            {
                let host = rest.split('/').next().unwrap_or(rest).to_string();
                let mut carried = self.upstream(cmd);
                for a in cmd.args() {
                    carried.extend(self.subst_carried(&a.subst));
                }
                if matches!(
                    program.as_str(),
                    "cat" | "base64" | "xxd" | "tar" | "gzip" | "head" | "tail"
                ) {
                    for o in &operands {
                        carried.extend(self.carried_by_path(&self.norm(o)));
                    }
                }
                if env_dumper(&program, &words) {
                    carried.insert("env");
                }
                let e = out.push(Kind::Send, line);
                e.host = Some(host);
                e.carries = carried;
                continue;
            }
            let p = self.norm(target);
            match r.kind {
                RedirectKind::Read => {
                    if !target.starts_with("/dev/fd/") {
                        out.path(Kind::Read, p.clone(), line);
                        produced.extend(self.carried_by_path(&p));
                    }
                }
                RedirectKind::Write | RedirectKind::Append => {
                    if p == "/dev/null"
                        || target.starts_with("/dev/fd/")
                        || target == "/dev/stderr"
                        || target == "/dev/stdout"
                    {
                        continue;
                    }
                    if self.paths.classes(&p).device {
                        out.path(Kind::Wipe, p.clone(), line);
                    }
                    out.path(Kind::Write, p.clone(), line);
                    let content = echo_content(cmd);
                    written_content(&p, &content, self.paths, out, line);
                    // The data this command prints lands in the file.
                    let mut carried = self.upstream(cmd);
                    for o in &operands {
                        if matches!(
                            program.as_str(),
                            "cat" | "base64" | "xxd" | "tar" | "zip" | "gzip" | "cp"
                        ) {
                            carried.extend(self.carried_by_path(&self.norm(o)));
                        }
                    }
                    if env_dumper(&program, &words) {
                        carried.insert("env");
                    }
                    if matches!(program.as_str(), "curl" | "wget")
                        && let Some(h) = words.iter().find_map(|w| url_host(w))
                    {
                        self.downloaded.insert(p.clone(), h);
                    }
                    self.tainted.entry(p).or_default().extend(carried);
                }
            }
        }

        match program.as_str() {
            "rm" | "rmdir" | "unlink" | "shred" | "srm" | "trash" | "trash-put" | "wipe" => {
                for o in &operands {
                    let p = self.norm(o);
                    if program == "shred" && self.paths.classes(&p).device {
                        out.path(Kind::Wipe, p.clone(), line);
                    }
                    out.path(Kind::Delete, p, line);
                }
            }
            "mv" => {
                if let Some((dst, srcs)) = operands.split_last() {
                    let d = self.norm(dst);
                    for s in srcs {
                        let p = self.norm(s);
                        out.path(Kind::Delete, p.clone(), line);
                        if let Some(t) = self.tainted.get(&p).cloned() {
                            self.tainted.insert(d.clone(), t);
                        }
                    }
                    if d != "/dev/null" {
                        out.path(Kind::Write, d, line);
                    }
                }
            }
            "cp" | "install" | "rsync" | "ditto" | "scp" | "sftp" => {
                let remote = operands.iter().any(|o| remote_spec(o).is_some());
                if let Some((dst, srcs)) = operands.split_last() {
                    let mut carried = Carried::new();
                    for s in srcs {
                        if remote_spec(s).is_some() {
                            continue;
                        }
                        let p = self.norm(s);
                        carried.extend(self.carried_by_path(&p));
                        out.path(Kind::Read, p, line);
                    }
                    if let Some(host) = remote_spec(dst) {
                        let e = out.push(Kind::Send, line);
                        e.host = Some(host);
                        e.carries = carried;
                    } else if !remote {
                        let d = self.norm(dst);
                        out.path(Kind::Write, d.clone(), line);
                        self.tainted.entry(d).or_default().extend(carried);
                    }
                    if program == "rsync"
                        && words.iter().any(|w| w.starts_with("--delete"))
                        && remote_spec(dst).is_none()
                    {
                        out.path(Kind::Delete, self.norm(dst), line);
                    }
                }
            }
            "ln" => {
                if let Some(dst) = operands.last() {
                    out.path(Kind::Write, self.norm(dst), line);
                }
            }
            "tee" => {
                for o in &operands {
                    let p = self.norm(o);
                    let content = self
                        .analysis
                        .upstream(cmd.pipe.0, cmd.pipe.1)
                        .map(|(_, c)| echo_content(c))
                        .collect::<Vec<_>>()
                        .join("\n");
                    written_content(&p, &content, self.paths, out, line);
                    out.path(Kind::Write, p.clone(), line);
                    let up = self.upstream(cmd);
                    self.tainted.entry(p).or_default().extend(up);
                }
            }
            "sed" | "perl"
                if words.iter().any(|w| {
                    w == "-i" || w.starts_with("-i") || w.starts_with("--in-place") || w == "-pi"
                }) =>
            {
                for o in operands.iter().skip(1) {
                    out.path(Kind::Write, self.norm(o), line);
                }
            }
            "truncate" => {
                for o in operands.iter().filter(|o| o.parse::<i64>().is_err()) {
                    out.path(Kind::Delete, self.norm(o), line);
                }
            }
            "dd" => {
                for w in &words {
                    if let Some(of) = w.strip_prefix("of=") {
                        let p = self.norm(of);
                        if self.paths.classes(&p).device {
                            out.path(Kind::Wipe, p.clone(), line);
                        }
                        out.path(Kind::Write, p, line);
                    }
                    if let Some(f) = w.strip_prefix("if=") {
                        let p = self.norm(f);
                        produced.extend(self.carried_by_path(&p));
                        out.path(Kind::Read, p, line);
                    }
                }
            }
            p if p.starts_with("mkfs")
                || matches!(
                    p,
                    "wipefs"
                        | "blkdiscard"
                        | "fdisk"
                        | "sfdisk"
                        | "parted"
                        | "sgdisk"
                        | "mkswap"
                        | "cryptsetup"
                ) =>
            {
                let target = operands.last().map(|o| self.norm(o)).unwrap_or_default();
                out.path(Kind::Wipe, target, line);
            }
            "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" => {
                let recursive = words.iter().any(|w| {
                    w == "-R"
                        || w == "--recursive"
                        || (w.starts_with('-') && !w.starts_with("--") && w.contains('R'))
                });
                // The mode may look like an option (`-x`, `-w`).
                let mode_at = words.iter().position(|w| {
                    !w.starts_with("--")
                        && !matches!(
                            w.as_str(),
                            "-R" | "-v" | "-f" | "-c" | "-h" | "-H" | "-L" | "-P"
                        )
                });
                let targets: Vec<&String> = words
                    .iter()
                    .skip(mode_at.map_or(words.len(), |p| p + 1))
                    .collect();
                for o in targets {
                    let e = out.push(Kind::Chmod, line);
                    e.path = Some(self.paths.normalize(o));
                    e.detail = if recursive {
                        "recursive".into()
                    } else {
                        String::new()
                    };
                }
            }
            "kill" | "pkill" | "killall" | "skill" => {
                let looked_up = cmd
                    .args()
                    .iter()
                    .flat_map(|a| a.subst.iter())
                    .any(|&s| self.analysis.commands[s].line().contains("copse"));
                if looked_up || words.iter().any(|w| w.contains("copse")) {
                    out.push(Kind::CopseOff, line);
                }
                if program == "kill"
                    && words.iter().any(|w| w == "-1")
                    && words.iter().any(|w| w == "-9" || w == "-KILL" || w == "-s")
                {
                    out.push(Kind::KillAll, line);
                }
                if program == "killall" && words.iter().any(|w| w == "-u")
                    || program == "pkill" && words.iter().any(|w| w == "-u" || w == "-U")
                {
                    out.push(Kind::KillAll, line);
                }
            }
            "printenv" if !operands.is_empty() && operands.iter().all(|o| secret_name(o)) => {
                out.push(Kind::SecretVar, line).detail = operands
                    .iter()
                    .map(|o| o.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                produced.insert("secret");
            }
            "useradd" | "adduser" | "usermod" | "userdel" | "groupadd" | "groupmod" | "passwd"
            | "chpasswd" | "visudo" | "gpasswd" => {
                out.push(Kind::Account, line);
            }
            "gpg" | "gpg2" if words.iter().any(|w| w.starts_with("--export-secret")) => {
                out.push(Kind::Credential, line);
                produced.insert("secret");
            }
            "env" | "printenv" | "set" | "export" | "declare" | "typeset" | "compgen"
                if env_dumper(&program, &words) =>
            {
                out.push(Kind::EnvDump, line);
                produced.insert("env");
            }
            "history" | "fc" => {
                produced.insert("history");
            }
            "crontab" if !words.iter().any(|w| w == "-l") => {
                out.push(Kind::Schedule, line);
            }
            "at" | "batch" if !words.iter().any(|w| w == "-l" || w == "-r" || w == "-d") => {
                out.push(Kind::Schedule, line);
            }
            "launchctl"
                if operands.first().is_some_and(|s| {
                    matches!(
                        s.as_str(),
                        "load" | "bootstrap" | "submit" | "enable" | "kickstart"
                    )
                }) =>
            {
                out.push(Kind::Schedule, line);
            }
            "systemctl" => {
                if operands.first().is_some_and(|s| {
                    matches!(
                        s.as_str(),
                        "enable" | "link" | "reenable" | "preset" | "set-default"
                    )
                }) {
                    out.push(Kind::Schedule, line);
                }
                if operands.iter().any(|o| o.contains("copse"))
                    && operands
                        .first()
                        .is_some_and(|s| matches!(s.as_str(), "stop" | "disable" | "mask" | "kill"))
                {
                    out.push(Kind::CopseOff, line);
                }
            }
            "schtasks" | "loginctl"
                if words
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case("/create") || w == "enable-linger") =>
            {
                out.push(Kind::Schedule, line);
            }
            "git" => self.git(cmd, &words, line, out),
            "copse-hooks" | "copse" => {
                let sub: Vec<&str> = operands.iter().map(|s| s.as_str()).collect();
                let off = match sub.as_slice() {
                    ["disable", ..] | ["uninstall", ..] | ["trust", ..] | ["untrust", ..] => true,
                    ["guard", "mode", m, ..] => *m != "enforce",
                    ["daemon", "stop", ..] => true,
                    ["settings", ..] | ["config", ..] => true,
                    _ => false,
                };
                if off {
                    out.push(Kind::CopseOff, line);
                }
            }
            "security"
                if operands.first().is_some_and(|s| {
                    s.starts_with("find-") || s.starts_with("dump-keychain") || *s == "export"
                }) =>
            {
                out.push(Kind::Credential, line);
                produced.insert("secret");
            }
            "secret-tool"
            | "keyring"
            | "op"
            | "pass"
            | "gopass"
            | "lpass"
            | "bw"
            | "vault"
            | "docker-credential-desktop"
            | "docker-credential-osxkeychain"
            | "docker-credential-pass"
            | "docker-credential-secretservice" => {
                let reads = operands.first().is_some_and(|s| {
                    matches!(
                        s.as_str(),
                        "lookup"
                            | "get"
                            | "read"
                            | "show"
                            | "item"
                            | "list"
                            | "export"
                            | "kv"
                            | "token"
                            | "unlock"
                    )
                }) || program.starts_with("docker-credential-");
                if reads {
                    out.push(Kind::Credential, line);
                    produced.insert("secret");
                }
            }
            "gh" => {
                let sub: Vec<&str> = operands.iter().map(|s| s.as_str()).collect();
                if matches!(sub.as_slice(), ["auth", "token", ..])
                    || (sub.first() == Some(&"auth")
                        && words.iter().any(|w| w == "--show-token" || w == "-t"))
                {
                    out.push(Kind::Credential, line);
                    produced.insert("secret");
                }
                if matches!(sub.as_slice(), ["gist", "create", ..]) {
                    let mut carried = Carried::new();
                    for f in sub.iter().skip(2) {
                        carried.extend(self.carried_by_path(&self.norm(f)));
                    }
                    let e = out.push(Kind::Send, line);
                    e.host = Some("gist.github.com".into());
                    e.carries = carried;
                }
                if matches!(sub.as_slice(), ["release", "create", ..]) {
                    out.push(Kind::Publish, line).detail = "gh release".into();
                }
                if matches!(sub.as_slice(), ["repo", "delete", ..]) {
                    out.push(Kind::Teardown, line);
                }
            }
            "gcloud" => {
                if words
                    .iter()
                    .any(|w| w == "print-access-token" || w == "print-identity-token")
                {
                    out.push(Kind::Credential, line);
                    produced.insert("secret");
                }
                if operands.iter().any(|w| *w == "delete") {
                    out.push(Kind::Teardown, line);
                }
            }
            "az" => {
                if words.iter().any(|w| w == "get-access-token") {
                    out.push(Kind::Credential, line);
                    produced.insert("secret");
                }
                if operands.iter().any(|w| *w == "delete") {
                    out.push(Kind::Teardown, line);
                }
            }
            "aws" => self.aws(&words, line, out, &mut produced),
            "kubectl" | "oc" => {
                if operands.first().is_some_and(|s| *s == "delete") {
                    out.push(Kind::Teardown, line);
                }
                if operands.first().is_some_and(|s| *s == "config")
                    && words.iter().any(|w| w == "--raw")
                {
                    out.push(Kind::Credential, line);
                    produced.insert("secret");
                }
            }
            "terraform" | "tofu" | "terragrunt" | "pulumi" | "cdk" | "cdktf" | "serverless"
            | "sls" => {
                let destroys = operands
                    .iter()
                    .any(|o| matches!(o.as_str(), "destroy" | "remove"))
                    || words.iter().any(|w| w == "-destroy" || w == "--destroy")
                    || (program == "pulumi"
                        && operands.windows(2).any(|w| w[0] == "stack" && w[1] == "rm"));
                if destroys {
                    out.push(Kind::Teardown, line);
                }
            }
            "helm" => {
                if operands
                    .first()
                    .is_some_and(|s| matches!(s.as_str(), "uninstall" | "delete" | "del" | "un"))
                {
                    out.push(Kind::Teardown, line);
                }
                if operands.first().is_some_and(|s| *s == "push") {
                    out.push(Kind::Publish, line);
                }
            }
            "heroku" | "fly" | "flyctl" | "doctl" | "vercel" | "netlify" | "railway" => {
                if operands.iter().any(|o| {
                    o.contains("destroy") || o.ends_with("delete") || *o == "remove" || *o == "rm"
                }) {
                    out.push(Kind::Teardown, line);
                }
                if program == "heroku" && operands.iter().any(|o| *o == "auth:token") {
                    out.push(Kind::Credential, line);
                }
            }
            "dropdb" | "dropuser" => {
                out.push(Kind::SqlDrop, line);
            }
            "psql" | "mysql" | "mariadb" | "sqlite3" | "sqlcmd" | "clickhouse-client"
            | "cockroach" | "duckdb" | "mongo" | "mongosh" | "cqlsh" => {
                let mut sql: Vec<&str> = words.iter().map(String::as_str).collect();
                if let Some(h) = &cmd.here {
                    sql.push(h);
                }
                if sql.iter().any(|s| drops_data(s)) {
                    out.push(Kind::SqlDrop, line);
                }
            }
            "redis-cli"
                if words.iter().any(|w| {
                    w.eq_ignore_ascii_case("flushall") || w.eq_ignore_ascii_case("flushdb")
                }) =>
            {
                out.push(Kind::SqlDrop, line);
            }
            "docker" | "podman" | "nerdctl" => self.container(&words, line, out, depth),
            "npm" | "pnpm" | "yarn" | "bun" | "cargo" | "pip" | "pip3" | "uv" | "poetry"
            | "gem" | "twine" | "flit" | "hatch" | "pdm" | "conda" | "mamba" | "go"
            | "composer" | "dotnet" | "mvn" | "gradle" | "pod" | "vsce" | "ovsx" | "npx"
            | "pnpx" | "bunx" | "uvx" | "pipx" | "deno" | "apt-key" | "add-apt-repository"
            | "python" | "python3" => {
                self.packages(&program, &words, line, out);
            }
            "claude" | "codex" | "gemini" | "cursor-agent" | "copilot" | "qwen" | "opencode"
            | "aider" | "goose" | "amp" => {
                let bypass = words.iter().any(|w| {
                    matches!(
                        w.as_str(),
                        "--dangerously-skip-permissions"
                            | "--dangerously-bypass-approvals-and-sandbox"
                            | "--yolo"
                            | "-y"
                            | "--force"
                            | "--allow-all-tools"
                            | "--allow-all-paths"
                            | "--approval-mode=yolo"
                            | "--full-auto"
                            | "bypassPermissions"
                            | "danger-full-access"
                    ) || w.starts_with("--dangerously")
                });
                if bypass {
                    out.push(Kind::AgentBypass, line);
                }
            }
            "pwsh" | "powershell" | "powershell.exe" => {
                let text = words.join(" ").to_ascii_lowercase();
                let fetches = [
                    "irm ",
                    "iwr ",
                    "invoke-restmethod",
                    "invoke-webrequest",
                    "downloadstring",
                    "net.webclient",
                    "curl ",
                    "wget ",
                ]
                .iter()
                .any(|k| text.contains(k));
                let runs = ["iex", "invoke-expression", "| powershell", "|powershell"]
                    .iter()
                    .any(|k| text.contains(k));
                if fetches && runs {
                    out.push(Kind::FetchExec, line).host = url_host(&text);
                }
                if text.contains("frombase64string") && runs {
                    out.push(Kind::DecodeExec, line);
                }
                if words.iter().any(|w| {
                    w.eq_ignore_ascii_case("-enc")
                        || w.eq_ignore_ascii_case("-encodedcommand")
                        || w.eq_ignore_ascii_case("-e")
                }) {
                    out.push(Kind::DecodeExec, line);
                }
            }
            _ => {}
        }

        // Secret files read by any program that reads its operands.
        if !NO_READ.contains(&program.as_str())
            && !matches!(
                program.as_str(),
                "cp" | "install" | "rsync" | "scp" | "dd" | "tee"
            )
        {
            for w in &words {
                let candidate = w
                    .strip_prefix('@')
                    .or_else(|| w.split_once('=').map(|(_, v)| v.trim_start_matches('@')))
                    .unwrap_or(w);
                if candidate.is_empty() || candidate.starts_with('-') && !w.contains('=') {
                    continue;
                }
                // A bare word is a file in the directory the command runs in (after
                // a `cd ~/.ssh`, `id_rsa` is the key); only a secret one counts.
                let bare = !(candidate.contains('/')
                    || candidate.starts_with('.')
                    || candidate.starts_with('~'));
                if bare && (candidate.contains(char::is_whitespace) || candidate.contains('$')) {
                    continue;
                }
                if candidate.contains("://") {
                    continue;
                }
                let p = self.norm(candidate);
                let carried = self.carried_by_path(&p);
                if carried.contains("secret")
                    || carried.contains("env")
                    || carried.contains("history")
                {
                    out.path(Kind::Read, p.clone(), line);
                }
                if matches!(
                    program.as_str(),
                    "cat"
                        | "base64"
                        | "xxd"
                        | "od"
                        | "hexdump"
                        | "head"
                        | "tail"
                        | "tar"
                        | "zip"
                        | "7z"
                        | "gzip"
                        | "bzip2"
                        | "xz"
                        | "gpg"
                        | "openssl"
                        | "less"
                        | "more"
                        | "strings"
                        | "sort"
                        | "uniq"
                        | "cut"
                        | "awk"
                        | "sed"
                        | "grep"
                        | "rg"
                        | "jq"
                        | "yq"
                        | "tac"
                        | "nl"
                        | "bat"
                        | "git"
                ) || w.starts_with('@')
                {
                    produced.extend(carried);
                }
            }
        }
        // Archives carry what they pack, into the file they write.
        if matches!(
            program.as_str(),
            "tar" | "zip" | "7z" | "gzip" | "bzip2" | "xz" | "zstd" | "git"
        ) {
            let target = archive_target(&program, &words);
            if let Some(t) = target {
                let p = self.norm(&t);
                let mut carried = produced.clone();
                if program == "git" && words.iter().any(|w| w == "bundle") {
                    carried.insert("file");
                }
                self.tainted.entry(p).or_default().extend(carried);
            }
        }

        // Secret variables in the words.
        let mut secret_vars = Vec::new();
        for a in cmd.args() {
            for v in var_refs(&a.text) {
                if secret_name(&v) {
                    secret_vars.push(v);
                }
            }
        }
        if !secret_vars.is_empty() {
            produced.insert("secret");
            if matches!(
                program.as_str(),
                "echo" | "printf" | "print" | "cat" | "printenv" | "env"
            ) && cmd.redirects.is_empty()
            {
                out.push(Kind::SecretVar, line).detail = secret_vars.join(" ");
            }
        }
        for a in cmd.args() {
            produced.extend(self.subst_carried(&a.subst));
        }
        if matches!(
            program.as_str(),
            "echo"
                | "printf"
                | "cat"
                | "base64"
                | "xxd"
                | "tr"
                | "rev"
                | "gzip"
                | "head"
                | "tail"
                | "cut"
                | "sed"
                | "awk"
                | "jq"
                | "tee"
                | "sort"
                | "od"
                | "hexdump"
                | "openssl"
                | "tar"
                | "zip"
                | "gpg"
                | "sh"
                | "bash"
        ) {
            produced.extend(self.upstream(cmd));
        }

        // The network.
        self.network(i, cmd, &program, &words, line, out, &produced);

        // Download-and-run and decode-and-run.
        if shell::runs_stdin(cmd) {
            if self.upstream_has(cmd, is_fetcher) {
                let host = self
                    .analysis
                    .upstream(cmd.pipe.0, cmd.pipe.1)
                    .find(|(_, c)| is_fetcher(c))
                    .and_then(|(_, c)| c.args().iter().find_map(|a| url_host(&a.text)));
                out.push(Kind::FetchExec, line).host = host;
            }
            if self.upstream_has(cmd, is_decoder) {
                out.push(Kind::DecodeExec, line);
            }
        }
        if runs_code(cmd) {
            for a in cmd.args() {
                let fetched = a
                    .subst
                    .iter()
                    .any(|&s| is_fetcher(&self.analysis.commands[s]));
                let decoded = a
                    .subst
                    .iter()
                    .any(|&s| is_decoder(&self.analysis.commands[s]));
                if fetched {
                    let host = a.subst.iter().find_map(|&s| {
                        self.analysis.commands[s]
                            .args()
                            .iter()
                            .find_map(|x| url_host(&x.text))
                    });
                    out.push(Kind::FetchExec, line).host = host;
                }
                if decoded {
                    out.push(Kind::DecodeExec, line);
                }
            }
            // A file this command line downloaded, run.
            for a in cmd.args().iter().take(3) {
                let p = self.norm(&a.text);
                if let Some(h) = self.downloaded.get(&p) {
                    out.push(Kind::FetchExec, line).host = Some(h.clone());
                }
            }
        }
        if let Some(first) = cmd.argv.first() {
            let p = self.norm(&first.text);
            let base = first.text.rsplit('/').next().unwrap_or(&first.text);
            let hit = self.downloaded.get(&p).cloned().or_else(|| {
                self.downloaded
                    .iter()
                    .find(|(k, _)| k.rsplit('/').next() == Some(base) && !first.text.contains('/'))
                    .map(|(_, h)| h.clone())
            });
            if let Some(h) = hit {
                out.push(Kind::FetchExec, line).host = Some(h);
            }
        }
        // What an interpreter one-liner does.
        if let Some(code) = &cmd.code {
            for d in &code.deletes {
                out.path(Kind::Delete, self.norm(d), line);
            }
            for w in &code.writes {
                out.path(Kind::Write, self.norm(w), line);
            }
            for c in &code.chmod {
                out.path(Kind::Chmod, self.norm(c), line);
            }
            let mut carried = Carried::new();
            for r in code.reads.iter().chain(code.paths.iter()) {
                let p = self.norm(r);
                let c = self.carried_by_path(&p);
                if c.contains("secret") || c.contains("env") || c.contains("history") {
                    out.path(Kind::Read, p.clone(), line);
                }
                carried.extend(c);
            }
            if code.env_all {
                carried.insert("env");
            }
            if code.env_vars.iter().any(|v| secret_name(v)) {
                carried.insert("secret");
            }
            for s in &code.shell {
                // What the code's shell commands print comes back into the code.
                let sub = shell::analyze(s, self.paths);
                for c in &sub.commands {
                    if env_dumper(
                        c.program(),
                        &c.args().iter().map(|a| a.text.clone()).collect::<Vec<_>>(),
                    ) {
                        carried.insert("env");
                    }
                    for a in c.args() {
                        let p = self.norm(&a.text);
                        let cb = self.carried_by_path(&p);
                        if cb.contains("secret") {
                            carried.insert("secret");
                        }
                    }
                }
            }
            if code.network {
                let hosts: Vec<String> = if code.hosts.is_empty() {
                    vec![String::new()]
                } else {
                    code.hosts.clone()
                };
                for h in hosts {
                    let sends = carried.iter().any(|c| *c != "file") || !code.reads.is_empty();
                    let e = out.push(if sends { Kind::Send } else { Kind::Fetch }, line);
                    e.host = (!h.is_empty()).then_some(h);
                    e.carries = carried.clone();
                }
                if code.exec_dynamic {
                    out.push(Kind::FetchExec, line).host = code.hosts.first().cloned();
                }
            }
            if code.decode_exec {
                out.push(Kind::DecodeExec, line);
            }
            if code.host_built && code.network {
                out.push(Kind::HostBuilt, line);
            }
            if !code.env_all && code.env_vars.iter().any(|v| secret_name(v)) && !code.network {
                out.push(Kind::SecretVar, line).detail = code.env_vars.join(" ");
            }
            if code.env_all && !code.network {
                out.push(Kind::EnvDump, line);
            }
            produced.extend(carried);
        }
        if cmd.via == Via::Find && program == "rm" {
            // (effects above)
        }
        self.output[i] = produced;
    }

    fn git(&mut self, cmd: &Cmd, words: &[String], line: &str, out: &mut CallEffects) {
        // Skip global options: -C dir, -c k=v, --git-dir=…
        let mut i = 0;
        let mut config_overrides = Vec::new();
        while i < words.len() {
            let w = words[i].as_str();
            if w == "-C"
                || w == "-c"
                || w == "--git-dir"
                || w == "--work-tree"
                || w == "--namespace"
            {
                if w == "-c"
                    && let Some(v) = words.get(i + 1)
                {
                    config_overrides.push(v.clone());
                }
                i += 2;
            } else if w.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        for c in &config_overrides {
            let key = c.split('=').next().unwrap_or("").to_ascii_lowercase();
            if matches!(
                key.as_str(),
                "core.hookspath"
                    | "core.fsmonitor"
                    | "core.sshcommand"
                    | "core.pager"
                    | "credential.helper"
            ) {
                out.push(Kind::GitConfig, line).detail = key;
            }
        }
        let Some(sub) = words.get(i) else {
            return;
        };
        let rest: Vec<&String> = words[i + 1..].iter().collect();
        let opts: Vec<&str> = rest
            .iter()
            .filter(|w| w.starts_with('-'))
            .map(|w| w.as_str())
            .collect();
        let args: Vec<&str> = rest
            .iter()
            .filter(|w| !w.starts_with('-'))
            .map(|w| w.as_str())
            .collect();
        match sub.as_str() {
            "push" => {
                // `--force-with-lease` still rewrites the remote branch (it only
                // checks nobody pushed since): on a shared branch it is a force push.
                let force = opts.iter().any(|o| {
                    *o == "-f"
                        || *o == "--force"
                        || o.starts_with("--force-with-lease")
                        || *o == "--mirror"
                        || (o.starts_with('-') && !o.starts_with("--") && o.contains('f'))
                }) || args.iter().skip(1).any(|a| a.starts_with('+'));
                let delete = opts.iter().any(|o| *o == "--delete" || *o == "-d")
                    || args.iter().skip(1).any(|a| a.starts_with(':'));
                let branches: Vec<String> = args
                    .iter()
                    .skip(1)
                    .map(|a| {
                        let a = a.trim_start_matches('+');
                        a.rsplit(':')
                            .next()
                            .unwrap_or(a)
                            .trim_start_matches("refs/heads/")
                            .to_string()
                    })
                    .collect();
                if force || delete {
                    let detail = if branches.is_empty() {
                        current_branch(self.paths).unwrap_or_default()
                    } else {
                        branches.join(" ")
                    };
                    out.push(Kind::ForcePush, line).detail = detail;
                }
                if let Some(remote) = args.first()
                    && let Some(url) = self.remotes.get(*remote)
                {
                    let e = out.push(Kind::Send, line);
                    e.host = url_host(url).or_else(|| remote_spec(url));
                    e.carries.insert("file");
                }
            }
            "remote" => {
                if matches!(args.first(), Some(&"add") | Some(&"set-url"))
                    && let (Some(name), Some(url)) = (args.get(1), args.get(2))
                {
                    self.remotes.insert((*name).to_string(), (*url).to_string());
                }
            }
            "reset" if opts.contains(&"--hard") => {
                out.push(Kind::HardReset, line).detail = "reset --hard".into();
            }
            "checkout" | "restore"
                if args.contains(&".") && (rest.iter().any(|w| *w == "--") || sub == "restore") =>
            {
                out.push(Kind::HardReset, line).detail = format!("{sub} .");
            }
            "stash" if matches!(args.first(), Some(&"clear") | Some(&"drop")) => {
                out.push(Kind::HardReset, line).detail = "stash".into();
            }
            "branch" if opts.contains(&"-D") => {
                let e = out.push(Kind::HardReset, line);
                e.detail = format!("branch -D {}", args.join(" "));
            }
            "filter-branch" | "filter-repo" => {
                out.push(Kind::HardReset, line).detail = sub.clone();
            }
            "config" => {
                let setting = !opts.iter().any(|o| {
                    matches!(
                        *o,
                        "--get" | "--get-all" | "--list" | "-l" | "--get-regexp" | "--show-origin"
                    )
                });
                if setting && let Some(key) = args.first() {
                    let key = key.to_ascii_lowercase();
                    let dangerous = matches!(
                        key.as_str(),
                        "core.hookspath"
                            | "core.fsmonitor"
                            | "core.sshcommand"
                            | "core.pager"
                            | "credential.helper"
                            | "core.editor"
                            | "sequence.editor"
                            | "diff.external"
                            | "core.gitproxy"
                            | "include.path"
                            | "includeif"
                    ) || key.starts_with("alias.")
                        && args.get(1).is_some_and(|v| v.starts_with('!'))
                        || key.starts_with("filter.")
                        || key.starts_with("url.") && key.ends_with("insteadof");
                    if dangerous && args.len() > 1 {
                        out.push(Kind::GitConfig, line).detail = key;
                    }
                }
            }
            "add" if opts.iter().any(|o| *o == "-f" || *o == "--force") => {
                for a in &args {
                    let p = self.norm(a);
                    let c = self.carried_by_path(&p);
                    if c.contains("secret") || p.ends_with("/secrets") || p.ends_with("/.env") {
                        out.path(Kind::Read, p, line);
                    }
                }
            }
            _ => {}
        }
        let _ = cmd;
    }

    fn aws(&mut self, words: &[String], line: &str, out: &mut CallEffects, produced: &mut Carried) {
        let ops: Vec<&str> = words
            .iter()
            .filter(|w| !w.starts_with('-'))
            .map(String::as_str)
            .collect();
        match ops.as_slice() {
            ["s3", "rm", ..] if words.iter().any(|w| w == "--recursive") => {
                out.push(Kind::Teardown, line);
            }
            ["s3", "rb", ..] => {
                out.push(Kind::Teardown, line);
            }
            ["s3", "cp" | "mv" | "sync", rest @ ..] => {
                if let Some((dst, srcs)) = rest.split_last()
                    && dst.starts_with("s3://")
                {
                    let mut carried = Carried::new();
                    for s in srcs {
                        if !s.starts_with("s3://") {
                            carried.extend(self.carried_by_path(&self.norm(s)));
                        }
                    }
                    let e = out.push(Kind::Send, line);
                    e.host = Some(
                        dst.trim_start_matches("s3://")
                            .split('/')
                            .next()
                            .unwrap_or("")
                            .to_string()
                            + ".s3.amazonaws.com",
                    );
                    e.carries = carried;
                }
            }
            ["configure", "get", key, ..] if key.contains("secret") || key.contains("token") => {
                out.push(Kind::Credential, line);
                produced.insert("secret");
            }
            ["configure", "export-credentials", ..]
            | ["sts", "get-session-token", ..]
            | ["ecr", "get-login-password", ..]
            | ["secretsmanager", "get-secret-value", ..]
            | ["ssm", "get-parameter" | "get-parameters", ..]
                if ops.get(1) != Some(&"get-parameter")
                    || words.iter().any(|w| w == "--with-decryption") =>
            {
                out.push(Kind::Credential, line);
                produced.insert("secret");
            }
            [_, op, ..]
                if op.starts_with("delete-")
                    || op.starts_with("terminate-")
                    || op.starts_with("remove-")
                    || *op == "rb" =>
            {
                out.push(Kind::Teardown, line);
            }
            _ => {}
        }
    }

    fn container(&mut self, words: &[String], line: &str, out: &mut CallEffects, depth: u8) {
        let sub = words
            .iter()
            .find(|w| !w.starts_with('-'))
            .map(String::as_str)
            .unwrap_or("");
        match sub {
            "push" => {
                out.push(Kind::Publish, line).detail = "docker push".into();
            }
            "run" | "create" | "exec" => {
                let mut maps: Vec<(String, String)> = Vec::new();
                let mut privileged = false;
                let mut i = words.iter().position(|w| w == sub).map_or(0, |p| p + 1);
                let mut image_at = None;
                while i < words.len() {
                    let w = words[i].as_str();
                    if w == "--privileged"
                        || w == "--pid=host"
                        || w == "--cap-add=ALL"
                        || w == "--cap-add=SYS_ADMIN"
                    {
                        privileged = true;
                    }
                    let vol = if w == "-v" || w == "--volume" || w == "--mount" {
                        i += 1;
                        words.get(i).cloned()
                    } else {
                        w.strip_prefix("--volume=")
                            .or_else(|| w.strip_prefix("-v="))
                            .or_else(|| w.strip_prefix("--mount="))
                            .map(str::to_string)
                    };
                    if let Some(v) = vol {
                        let (src, dst) = if v.contains("source=") || v.contains("src=") {
                            let get = |k: &str| {
                                v.split(',')
                                    .find_map(|p| p.strip_prefix(k))
                                    .unwrap_or("")
                                    .to_string()
                            };
                            (get_any(&v, &["source=", "src="]), {
                                let d = get("target=");
                                if d.is_empty() { get("destination=") } else { d }
                            })
                        } else {
                            let mut parts = v.splitn(3, ':');
                            (
                                parts.next().unwrap_or("").to_string(),
                                parts.next().unwrap_or("").to_string(),
                            )
                        };
                        if !src.is_empty() && !dst.is_empty() {
                            maps.push((self.norm(&src), dst));
                        }
                    } else if matches!(
                        w,
                        "-e" | "--env"
                            | "-w"
                            | "--workdir"
                            | "--name"
                            | "-u"
                            | "--user"
                            | "--network"
                            | "--net"
                            | "-p"
                            | "--publish"
                            | "--entrypoint"
                            | "--platform"
                            | "-h"
                            | "--hostname"
                            | "--env-file"
                            | "-l"
                            | "--label"
                            | "--cpus"
                            | "-m"
                            | "--memory"
                    ) {
                        i += 1;
                    } else if !w.starts_with('-') && image_at.is_none() {
                        image_at = Some(i);
                        break;
                    }
                    i += 1;
                }
                for (src, _) in &maps {
                    let c = self.paths.classes(src);
                    if c.root || c.home || c.system || c.secret {
                        let e = out.push(Kind::Container, line);
                        e.path = Some(src.clone());
                        e.detail = "mount".into();
                    }
                }
                if privileged {
                    out.push(Kind::Container, line).detail = "privileged".into();
                }
                // The command inside, with the mounts mapped back to the host.
                if let Some(at) = image_at {
                    let inner: Vec<String> = words[at + 1..]
                        .iter()
                        .map(|w| {
                            let mut w = w.clone();
                            for (src, dst) in &maps {
                                if w == *dst || w.starts_with(&format!("{dst}/")) {
                                    w = format!("{src}{}", &w[dst.len()..]);
                                }
                                w = w
                                    .replace(&format!(" {dst}/"), &format!(" {src}/"))
                                    .replace(&format!(" {dst} "), &format!(" {src} "));
                                if w.ends_with(&format!(" {dst}")) {
                                    let cut = w.len() - dst.len();
                                    w = format!("{}{src}", &w[..cut]);
                                }
                            }
                            w
                        })
                        .collect();
                    if !maps.is_empty() && !inner.is_empty() {
                        let text = inner
                            .iter()
                            .map(|w| crate::notice::shell_quote(std::path::Path::new(w)))
                            .collect::<Vec<_>>()
                            .join(" ");
                        let mut sub = CallEffects::default();
                        shell_effects(&text, self.paths, &mut sub, depth + 1);
                        // Only what reaches the mounted host paths matters.
                        for e in sub.effects {
                            if e.path.as_ref().is_some_and(|p| {
                                maps.iter()
                                    .any(|(s, _)| p == s || p.starts_with(&format!("{s}/")))
                            }) || e.kind == Kind::Send
                            {
                                out.effects.push(e);
                            }
                        }
                    }
                }
            }
            "system" | "volume"
                if words.iter().any(|w| w == "prune")
                    && words
                        .iter()
                        .any(|w| w == "-a" || w == "--all" || w == "--volumes") =>
            {
                out.push(Kind::Teardown, line);
            }
            _ => {}
        }
    }

    fn packages(&mut self, program: &str, words: &[String], line: &str, out: &mut CallEffects) {
        let ops: Vec<&str> = words
            .iter()
            .filter(|w| !w.starts_with('-'))
            .map(String::as_str)
            .collect();
        let has = |o: &str| {
            words
                .iter()
                .any(|w| w == o || w.starts_with(&format!("{o}=")))
        };
        let value = |names: &[&str]| -> Option<String> {
            for (i, w) in words.iter().enumerate() {
                for n in names {
                    if w == n {
                        return words.get(i + 1).cloned();
                    }
                    if let Some(v) = w.strip_prefix(&format!("{n}=")) {
                        return Some(v.to_string());
                    }
                }
            }
            None
        };
        // python -m pip / python -m twine
        let (program, ops): (&str, Vec<&str>) = if matches!(program, "python" | "python3") {
            match words.iter().position(|w| w == "-m") {
                Some(p) => match words.get(p + 1) {
                    Some(m) => (
                        m.as_str(),
                        words[p + 2..]
                            .iter()
                            .filter(|w| !w.starts_with('-'))
                            .map(String::as_str)
                            .collect(),
                    ),
                    None => return,
                },
                None => return,
            }
        } else if program == "uv" && ops.first() == Some(&"pip") {
            ("pip", ops[1..].to_vec())
        } else {
            (program, ops)
        };
        let first = ops.first().copied().unwrap_or("");
        if matches!(first, "uninstall" | "remove" | "rm" | "un" | "r")
            && ops.iter().skip(1).any(|o| o.contains("copse"))
        {
            out.push(Kind::CopseOff, line);
        }
        // Publishing.
        let publish = match program {
            "npm" | "pnpm" | "bun" => first == "publish",
            "yarn" => first == "publish" || ops.starts_with(&["npm", "publish"]),
            "cargo" => first == "publish",
            "twine" => first == "upload",
            "gem" => first == "push",
            "poetry" | "flit" | "hatch" | "pdm" | "uv" => first == "publish",
            "dotnet" => ops.starts_with(&["nuget", "push"]),
            "mvn" => first == "deploy",
            "gradle" => first.starts_with("publish"),
            "pod" => ops.starts_with(&["trunk", "push"]),
            "vsce" | "ovsx" => first == "publish",
            _ => false,
        };
        if publish {
            out.push(Kind::Publish, line).detail = format!("{program} {first}");
        }
        // Package sources.
        let index_opts = [
            "--index-url",
            "-i",
            "--extra-index-url",
            "--trusted-host",
            "--find-links",
            "-f",
            "--registry",
            "--index",
            "--default-index",
            "--source",
        ];
        if let Some(v) = value(&index_opts) {
            let host = url_host(&v).unwrap_or(v);
            if !official_registry(&host) {
                let e = out.push(Kind::PackageSource, line);
                e.host = Some(host);
            }
        }
        let config_set = (matches!(program, "pip" | "npm" | "pnpm" | "yarn" | "conda")
            && ops.starts_with(&["config", "set"]))
            || (program == "poetry" && ops.starts_with(&["source", "add"]))
            || (program == "gem" && first == "sources" && has("--add"))
            || (program == "conda" && ops.starts_with(&["config", "--add"]));
        if config_set {
            let host = ops
                .iter()
                .find_map(|o| url_host(o))
                .or_else(|| words.iter().find_map(|w| url_host(w)))
                .unwrap_or_default();
            if !official_registry(&host) {
                let e = out.push(Kind::PackageSource, line);
                e.host = Some(host);
            }
        }
        if matches!(program, "apt-key" | "add-apt-repository") && !ops.contains(&"list") {
            out.push(Kind::PackageSource, line);
        }
        // Installs from outside a registry, and names one edit away from a popular one.
        let installs = match program {
            "pip" | "pip3" => first == "install",
            "npm" | "pnpm" | "bun" => matches!(first, "install" | "i" | "add"),
            "yarn" => first == "add",
            "cargo" => first == "install",
            "gem" => first == "install",
            "poetry" | "uv" | "pdm" => first == "add",
            "pipx" => first == "install",
            "go" => first == "install" || first == "get",
            _ => false,
        };
        if installs {
            for pkg in ops.iter().skip(1) {
                if let Some(host) = url_host(pkg)
                    .or_else(|| pkg.starts_with("git+").then(|| "git".to_string()))
                    .or_else(|| pkg.starts_with("github:").then(|| "github.com".to_string()))
                {
                    if !official_registry(&host) {
                        let e = out.push(Kind::Install, line);
                        e.host = Some(host);
                        e.detail = (*pkg).to_string();
                    }
                } else if let Some(popular) = typosquat(program, pkg) {
                    let e = out.push(Kind::Install, line);
                    e.detail = format!("{pkg} (one letter from {popular})");
                    e.host = Some("typosquat".into());
                }
            }
            if program == "cargo"
                && let Some(git) = value(&["--git"])
            {
                let e = out.push(Kind::Install, line);
                e.host = url_host(&git);
                e.detail = git;
            }
        }
        // Running a package fetched on the spot.
        let runner = match program {
            "npx" | "pnpx" | "bunx" | "uvx" => Some(0),
            "pnpm" | "yarn" if first == "dlx" => Some(1),
            "npm" if first == "exec" => Some(1),
            "pipx" if first == "run" => Some(1),
            _ => None,
        };
        if let Some(skip) = runner {
            let pkg_words: Vec<&str> = ops.iter().skip(skip).copied().collect();
            if let Some(pkg) = pkg_words.first() {
                let name = pkg
                    .rsplit_once('@')
                    .filter(|(n, _)| !n.is_empty())
                    .map_or(*pkg, |(n, _)| n);
                let inner = pkg_words.get(1).copied().unwrap_or("");
                if matches!(
                    name,
                    "vsce"
                        | "@vscode/vsce"
                        | "ovsx"
                        | "np"
                        | "release-it"
                        | "semantic-release"
                        | "lerna"
                        | "changeset"
                ) && matches!(inner, "publish" | "")
                    && name != "changeset"
                {
                    if inner == "publish"
                        || matches!(name, "np" | "release-it" | "semantic-release")
                    {
                        out.push(Kind::Publish, line).detail = format!("{name} {inner}");
                    }
                } else if !known_runner_package(name) && !project_dependency(self.paths, name) {
                    let e = out.push(Kind::RunPackage, line);
                    e.detail = name.to_string();
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)] // the command's parts, computed once by the caller
    fn network(
        &mut self,
        _i: usize,
        cmd: &Cmd,
        program: &str,
        words: &[String],
        line: &str,
        out: &mut CallEffects,
        produced: &Carried,
    ) {
        let net = matches!(
            program,
            "curl"
                | "wget"
                | "nc"
                | "ncat"
                | "netcat"
                | "socat"
                | "ssh"
                | "telnet"
                | "ftp"
                | "tftp"
                | "http"
                | "https"
                | "xh"
                | "httpie"
                | "aria2c"
                | "openssl"
                | "mail"
                | "mailx"
                | "sendmail"
                | "mutt"
                | "dig"
                | "nslookup"
                | "host"
                | "drill"
                | "ping"
                | "ping6"
                | "traceroute"
                | "rclone"
                | "ipfs"
                | "lftp"
                | "smbclient"
                | "irm"
                | "iwr"
                | "websocat"
                | "wscat"
                | "croc"
                | "magic-wormhole"
                | "wormhole"
        );
        if !net {
            return;
        }
        if program == "openssl" && !words.iter().any(|w| w == "s_client") {
            return;
        }
        let hosts: Vec<String> = words
            .iter()
            .filter_map(|w| {
                url_host(w)
                    .or_else(|| remote_spec(w))
                    .or_else(|| bare_host(program, w))
            })
            .collect();
        let mut carried = Carried::new();
        // Data sent from files: curl -d @f, -F x=@f, -T f, --data-binary @f, wget --post-file=f.
        let mut k = 0;
        while k < words.len() {
            let w = words[k].as_str();
            let val = |k: usize| words.get(k + 1).map(String::as_str).unwrap_or("");
            let (file, step) = match w {
                "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode"
                | "--json" | "-F" | "--form" => {
                    let v = val(k);
                    (
                        v.split_once('@')
                            .map(|(_, f)| f.to_string())
                            .or_else(|| v.strip_prefix('@').map(str::to_string)),
                        2,
                    )
                }
                "-T" | "--upload-file" => (Some(val(k).to_string()), 2),
                _ if w.starts_with("--post-file=") || w.starts_with("--body-file=") => {
                    (w.split_once('=').map(|(_, f)| f.to_string()), 1)
                }
                _ if w.starts_with("-d@") => (Some(w[3..].to_string()), 1),
                _ if program == "http" || program == "https" || program == "xh" => (
                    w.split_once("=@")
                        .or_else(|| w.split_once("@"))
                        .filter(|(k, _)| !k.contains('/') && !k.is_empty())
                        .map(|(_, f)| f.to_string()),
                    1,
                ),
                _ => (None, 1),
            };
            if let Some(f) = file {
                let f = f.trim_start_matches('<');
                if f == "-" {
                    carried.extend(self.upstream(cmd));
                } else if !f.is_empty() {
                    let p = self.norm(f.split(';').next().unwrap_or(f));
                    carried.extend(self.carried_by_path(&p));
                }
            }
            k += step;
        }
        // Data from substitutions and variables in the words (URL, headers, bodies).
        for a in cmd.args() {
            carried.extend(self.subst_carried(&a.subst));
            for v in var_refs(&a.text) {
                if secret_name(&v) {
                    carried.insert("secret");
                }
            }
        }
        // Standard input and redirections.
        let stdin_senders = matches!(
            program,
            "nc" | "ncat"
                | "netcat"
                | "socat"
                | "ssh"
                | "telnet"
                | "openssl"
                | "mail"
                | "mailx"
                | "sendmail"
                | "mutt"
                | "websocat"
                | "wscat"
        );
        if stdin_senders || words.iter().any(|w| w == "@-" || w == "-") {
            carried.extend(self.upstream(cmd));
            for r in &cmd.redirects {
                if r.kind == RedirectKind::Read {
                    carried.extend(self.carried_by_path(&self.norm(&r.target.text)));
                }
            }
        }
        if program == "ssh" {
            // ssh host 'cat > x' < file / tar c | ssh … : what it sends is its input.
            carried.extend(produced.iter().copied().filter(|c| *c != "file"));
        }
        if program == "mail" || program == "mailx" || program == "sendmail" || program == "mutt" {
            for w in words {
                if w.contains('@') && !w.starts_with('-') {
                    let e = out.push(Kind::Send, line);
                    e.host = w.rsplit('@').next().map(str::to_string);
                    e.carries = carried.clone();
                }
            }
        }
        if matches!(
            program,
            "dig" | "nslookup" | "host" | "drill" | "ping" | "ping6" | "traceroute"
        ) {
            // Data in a DNS name or a ping pattern.
            if carried.is_empty() && !cmd.args().iter().any(|a| !a.subst.is_empty()) {
                return;
            }
            carried.insert("file");
        }
        let kind = if carried.is_empty() {
            Kind::Fetch
        } else {
            Kind::Send
        };
        if hosts.is_empty() {
            let e = out.push(kind, line);
            e.carries = carried;
        } else {
            for h in hosts {
                let e = out.push(kind, line);
                e.host = Some(h);
                e.carries = carried.clone();
            }
        }
        // Where a download lands.
        if matches!(program, "curl" | "wget" | "aria2c") {
            let target = words
                .iter()
                .enumerate()
                .find_map(|(k, w)| match w.as_str() {
                    "-o" | "--output" | "-O" if program == "wget" && w == "-O" => {
                        words.get(k + 1).cloned()
                    }
                    "-o" | "--output" if program == "curl" => words.get(k + 1).cloned(),
                    _ if w.starts_with("--output-document=") => {
                        w.split_once('=').map(|(_, v)| v.to_string())
                    }
                    _ if program == "curl"
                        && w.starts_with("-")
                        && !w.starts_with("--")
                        && w.ends_with('o')
                        && w.len() > 2 =>
                    {
                        words.get(k + 1).cloned()
                    }
                    _ => None,
                });
            let target = target.or_else(|| {
                // curl -O / wget URL: the URL's last segment in the working directory.
                let remote_name = program == "wget"
                    && !words
                        .iter()
                        .any(|w| w == "-O" || w == "-qO-" || w.starts_with("-O"))
                    || words.iter().any(|w| w == "-O" || w == "--remote-name") && program == "curl";
                if remote_name {
                    words
                        .iter()
                        .find(|w| w.contains("://"))
                        .and_then(|u| u.rsplit('/').next())
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                } else {
                    None
                }
            });
            if let Some(t) = target.filter(|t| t != "-") {
                let p = self.norm(&t);
                out.path(Kind::Write, p.clone(), line);
                let host = words.iter().find_map(|w| url_host(w)).unwrap_or_default();
                self.downloaded.insert(p, host);
            }
        }
    }
}

fn get_any(v: &str, keys: &[&str]) -> String {
    v.split(',')
        .find_map(|p| keys.iter().find_map(|k| p.strip_prefix(k)))
        .unwrap_or("")
        .to_string()
}

/// The file an archiver writes.
fn archive_target(program: &str, words: &[String]) -> Option<String> {
    match program {
        "tar" => {
            for (i, w) in words.iter().enumerate() {
                if let Some(v) = w.strip_prefix("--file=") {
                    return Some(v.to_string());
                }
                if w.starts_with('-') && !w.starts_with("--") && w.contains('f')
                    || (i == 0 && !w.starts_with('-') && w.contains('f') && w.contains('c'))
                {
                    return words.get(i + 1).cloned();
                }
            }
            None
        }
        "zip" | "7z" => words
            .iter()
            .find(|w| !w.starts_with('-') && *w != "a")
            .cloned(),
        "git" => {
            let p = words.iter().position(|w| w == "bundle")?;
            words.get(p + 2).cloned()
        }
        _ => None,
    }
}

/// `user@host:path`, `host:path` (scp, rsync): the host.
fn remote_spec(word: &str) -> Option<String> {
    if word.contains("://")
        || word.starts_with('/')
        || word.starts_with('.')
        || word.starts_with('~')
    {
        return None;
    }
    let (left, _) = word.split_once(':')?;
    let host = left.rsplit('@').next()?;
    (!host.is_empty()
        && (host.contains('.') || left.contains('@'))
        && !host.contains(['/', '=', ' ']))
    .then(|| host.to_ascii_lowercase())
}

/// A host given as a bare operand (`nc 203.0.113.9 4444`, `ssh user@host`,
/// `socat - TCP:host:port`, `openssl s_client -connect host:443`).
fn bare_host(program: &str, word: &str) -> Option<String> {
    if let Some(rest) = word
        .strip_prefix("TCP:")
        .or_else(|| word.strip_prefix("tcp:"))
        .or_else(|| word.strip_prefix("UDP:"))
        .or_else(|| word.strip_prefix("TCP4:"))
    {
        return rest.split(':').next().map(str::to_string);
    }
    if word.starts_with('-') || word.contains('/') || word.contains('=') {
        return None;
    }
    let w = word.rsplit('@').next().unwrap_or(word);
    let w = w.split(':').next().unwrap_or(w);
    let looks = w.split('.').count() >= 2
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && w.chars().any(|c| c.is_ascii_alphabetic() || c == '.')
        && !w.ends_with('.');
    let ip = w.split('.').count() == 4 && w.split('.').all(|p| p.parse::<u8>().is_ok());
    if !(looks || ip) {
        return None;
    }
    // File names (`x.txt`) are not hosts for programs that also take files.
    if matches!(program, "curl" | "wget" | "http" | "https" | "xh") {
        return None;
    }
    if !ip
        && w.rsplit('.').next().is_some_and(|tld| {
            matches!(
                tld,
                "txt"
                    | "json"
                    | "gz"
                    | "tgz"
                    | "zip"
                    | "sh"
                    | "py"
                    | "log"
                    | "md"
                    | "tar"
                    | "pem"
                    | "key"
            )
        })
    {
        return None;
    }
    Some(w.to_ascii_lowercase())
}

/// Whether `env`, `printenv`, `set`, … prints the environment (not one variable, not
/// running a command).
fn env_dumper(program: &str, words: &[String]) -> bool {
    let operands: Vec<&String> = words.iter().filter(|w| !w.starts_with('-')).collect();
    match program {
        "env" => {
            operands.iter().all(|o| o.contains('='))
                && !words
                    .iter()
                    .any(|w| w == "-u" || w == "--unset" || w == "-S")
        }
        "printenv" => operands.iter().all(|o| secret_name(o)),
        "set" => words.is_empty(),
        "export" | "declare" | "typeset" => {
            words.iter().any(|w| w == "-p" || w == "-x" || w == "-px") && operands.is_empty()
                || program == "export" && words.is_empty()
        }
        "compgen" => words.iter().any(|w| w == "-e" || w == "-v"),
        _ => false,
    }
}

/// The text an `echo`/`printf` prints (for content checks of what it writes).
fn echo_content(cmd: &Cmd) -> String {
    match cmd.program() {
        "echo" | "printf" => cmd
            .args()
            .iter()
            .filter(|a| !a.text.starts_with('-'))
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        "cat" => cmd.here.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

fn is_fetcher(c: &Cmd) -> bool {
    matches!(
        c.program(),
        "curl"
            | "wget"
            | "fetch"
            | "http"
            | "https"
            | "xh"
            | "aria2c"
            | "lynx"
            | "links"
            | "irm"
            | "iwr"
            | "httpie"
    ) || (c.program() == "nc" && !c.redirects.iter().any(|r| r.kind == RedirectKind::Read))
}

fn is_decoder(c: &Cmd) -> bool {
    let words: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    match c.program() {
        "base64" | "base32" | "basenc" => words
            .iter()
            .any(|w| matches!(*w, "-d" | "--decode" | "-D" | "-di" | "-id")),
        "xxd" => words.iter().any(|w| w.starts_with("-r")),
        "openssl" => {
            words
                .iter()
                .any(|w| *w == "-d" || *w == "-base64" && words.contains(&"-d"))
                || words.first().is_some_and(|w| *w == "base64") && words.contains(&"-d")
        }
        "rev" | "uudecode" | "gunzip" | "zcat" | "bzcat" | "xzcat" | "unxz" | "lzcat"
        | "zstdcat" => true,
        "gzip" | "bzip2" | "xz" | "zstd" => words
            .iter()
            .any(|w| *w == "-d" || *w == "-dc" || *w == "-cd" || *w == "--decompress"),
        "tr" => words
            .iter()
            .any(|w| w.contains("N-ZA-M") || w.contains("n-za-m")),
        "printf" => words.iter().any(|w| w.contains("\\x") || w.contains("\\0")),
        "echo" => words.contains(&"-e") && words.iter().any(|w| w.contains("\\x")),
        "perl" | "python" | "python3" => c.code.as_ref().is_some_and(|f| {
            f.decode_exec
                || f.shell.is_empty()
                    && f.deletes.is_empty()
                    && !f.network
                    && words.join(" ").contains("decode")
        }),
        _ => false,
    }
}

/// Programs that execute code handed to them in a word: shells with `-c`, `eval`,
/// interpreters, `source`.
fn runs_code(c: &Cmd) -> bool {
    let p = c.program();
    matches!(
        p,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "eval" | "source" | "." | "exec"
    ) || super::code::interpreter(p).is_some()
}

/// `$NAME` and `${NAME…}` references in a word.
fn var_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            if j < b.len() && b[j] == b'{' {
                j += 1;
            }
            let start = j;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start {
                out.push(text[start..j].to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Whether an environment variable's name says it holds a secret.
pub(crate) fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if matches!(
        n.as_str(),
        "PATH" | "HOME" | "PWD" | "USER" | "SHELL" | "TERM" | "LANG"
    ) {
        return false;
    }
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "CREDENTIAL",
        "AUTH",
        "SESSION_KEY",
        "_PAT",
        "CLIENT_SECRET",
        "SIGNING_KEY",
        "WEBHOOK_URL",
        "DSN",
    ]
    .iter()
    .any(|k| n.contains(k))
        || n.ends_with("_KEY") && !n.ends_with("KEYBOARD_KEY")
}

/// Whether SQL text drops or empties data.
pub(crate) fn drops_data(sql: &str) -> bool {
    let s = sql.to_ascii_uppercase();
    let words: Vec<&str> = s
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        match *w {
            "DROP"
                if matches!(
                    next,
                    "TABLE"
                        | "DATABASE"
                        | "SCHEMA"
                        | "COLLECTION"
                        | "INDEX"
                        | "VIEW"
                        | "KEYSPACE"
                        | "OWNED"
                        | "USER"
                        | "ROLE"
                ) =>
            {
                return true;
            }
            "TRUNCATE" => return true,
            "DELETE" if next == "FROM" && !words[i..].contains(&"WHERE") => return true,
            "DROPDATABASE" | "FLUSHALL" | "FLUSHDB" => return true,
            _ => {}
        }
    }
    s.contains("DROPDATABASE()") || s.contains(".DROP()")
}

/// The registries the package managers use by default.
fn official_registry(host: &str) -> bool {
    let h = host.trim_end_matches('/');
    matches!(
        h,
        "pypi.org"
            | "pypi.python.org"
            | "files.pythonhosted.org"
            | "registry.npmjs.org"
            | "registry.yarnpkg.com"
            | "crates.io"
            | "index.crates.io"
            | "static.crates.io"
            | "rubygems.org"
            | "repo.maven.apache.org"
            | "repo1.maven.org"
            | "api.nuget.org"
            | "proxy.golang.org"
            | "conda.anaconda.org"
            | "repo.anaconda.com"
            | "npm.pkg.github.com"
            | "jsr.io"
    ) || h == "localhost"
        || h.starts_with("127.")
}

/// CLIs agents run through `npx` & co. that are not an arbitrary download.
fn known_runner_package(name: &str) -> bool {
    const KNOWN: &[&str] = &[
        "tsc",
        "typescript",
        "eslint",
        "prettier",
        "jest",
        "vitest",
        "vite",
        "next",
        "nuxt",
        "astro",
        "create-react-app",
        "create-next-app",
        "create-vite",
        "create-astro",
        "create-svelte",
        "sv",
        "storybook",
        "playwright",
        "@playwright/test",
        "cypress",
        "tsx",
        "ts-node",
        "nodemon",
        "webpack",
        "webpack-cli",
        "rollup",
        "esbuild",
        "turbo",
        "nx",
        "lerna",
        "changeset",
        "@changesets/cli",
        "prisma",
        "drizzle-kit",
        "knip",
        "depcheck",
        "npm-check-updates",
        "ncu",
        "serve",
        "http-server",
        "concurrently",
        "rimraf",
        "cross-env",
        "husky",
        "lint-staged",
        "commitlint",
        "@commitlint/cli",
        "semantic-release",
        "degit",
        "tailwindcss",
        "@tailwindcss/cli",
        "postcss",
        "svgo",
        "madge",
        "license-checker",
        "tsup",
        "biome",
        "@biomejs/biome",
        "oxlint",
        "stylelint",
        "mocha",
        "ava",
        "c8",
        "nyc",
        "wrangler",
        "vercel",
        "netlify-cli",
        "firebase-tools",
        "@angular/cli",
        "ng",
        "@vue/cli",
        "expo",
        "react-native",
        "shadcn",
        "shadcn-ui",
        "@modelcontextprotocol/inspector",
        "markdownlint-cli",
        "markdownlint-cli2",
        "ruff",
        "black",
        "mypy",
        "pytest",
        "httpie",
        "cowsay",
        "uv",
        "pre-commit",
        "tox",
        "nox",
        "cookiecutter",
        "pipdeptree",
        "pip-audit",
        "sqlfluff",
        "yamllint",
        "codespell",
        "isort",
        "flake8",
        "pylint",
        "pyright",
        "poetry",
        "hatch",
        "vsce",
        "@vscode/vsce",
    ];
    KNOWN.contains(&name)
}

/// Whether the project already depends on `name` (its `package.json`).
fn project_dependency(paths: &Paths, name: &str) -> bool {
    let cwd = paths
        .cwd
        .replacen('~', &paths.home, usize::from(paths.cwd.starts_with('~')));
    let Ok((text, _)) = crate::fsread::read_prefix(
        std::path::Path::new(&cwd).join("package.json").as_path(),
        1 << 20,
    ) else {
        return false;
    };
    let Ok(json) = serde_json::from_slice::<Value>(&text) else {
        return false;
    };
    [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "peerDependencies",
    ]
    .iter()
    .any(|k| {
        json.get(k)
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key(name))
    })
}

/// The popular package `pkg` is one edit away from, for the package managers whose
/// registries see typosquats most.
fn typosquat(program: &str, pkg: &str) -> Option<&'static str> {
    const PYPI: &[&str] = &[
        "requests",
        "numpy",
        "pandas",
        "django",
        "flask",
        "urllib3",
        "setuptools",
        "boto3",
        "botocore",
        "pyyaml",
        "cryptography",
        "pytest",
        "matplotlib",
        "scipy",
        "pillow",
        "sqlalchemy",
        "jinja2",
        "click",
        "colorama",
        "beautifulsoup4",
        "selenium",
        "tensorflow",
        "torch",
        "scikit-learn",
        "fastapi",
        "pydantic",
        "httpx",
        "aiohttp",
        "openai",
        "python-dateutil",
        "certifi",
        "idna",
        "six",
        "packaging",
        "psycopg2",
        "redis",
        "celery",
        "jupyter",
        "tqdm",
        "rich",
    ];
    const NPM: &[&str] = &[
        "react",
        "lodash",
        "express",
        "axios",
        "chalk",
        "commander",
        "moment",
        "request",
        "webpack",
        "typescript",
        "vue",
        "jquery",
        "underscore",
        "debug",
        "dotenv",
        "uuid",
        "yargs",
        "mongoose",
        "eslint",
        "prettier",
        "next",
        "jest",
        "cross-env",
        "classnames",
        "bluebird",
        "async",
        "body-parser",
        "cors",
        "socket.io",
        "redux",
        "electron",
        "discord.js",
        "ethers",
        "web3",
        "colors",
        "node-fetch",
        "minimist",
        "glob",
        "rimraf",
        "semver",
    ];
    let list = match program {
        "pip" | "pip3" | "poetry" | "uv" | "pdm" | "pipx" => PYPI,
        "npm" | "pnpm" | "yarn" | "bun" => NPM,
        _ => return None,
    };
    let name = pkg
        .split(['=', '<', '>', '~', '[', '!'])
        .next()
        .unwrap_or(pkg);
    let name = if name.starts_with('@') {
        name
    } else {
        name.rsplit_once('@').map_or(name, |(n, _)| n)
    };
    let name = name.to_ascii_lowercase();
    if name.len() < 4 || list.contains(&name.as_str()) {
        return None;
    }
    list.iter()
        .find(|p| {
            let d = strsim::damerau_levenshtein(p, &name);
            d == 1 && p.len() >= 5
        })
        .copied()
}

/// The branch `.git/HEAD` of the working directory names.
fn current_branch(paths: &Paths) -> Option<String> {
    let cwd = paths
        .cwd
        .replacen('~', &paths.home, usize::from(paths.cwd.starts_with('~')));
    let mut dir = std::path::PathBuf::from(cwd);
    for _ in 0..16 {
        let head = dir.join(".git/HEAD");
        if let Ok((text, _)) = crate::fsread::read_prefix(&head, 4096) {
            let text = String::from_utf8_lossy(&text);
            return text
                .trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_string);
        }
        if !dir.pop() {
            break;
        }
    }
    None
}

// ---------------------------------------------------------------------------------
// MCP

/// The servers whose tool's `command` argument is that CLI's arguments.
const CLI_SERVERS: &[(&str, &str)] = &[
    ("terraform", "terraform"),
    ("kubernetes", "kubectl"),
    ("kubectl", "kubectl"),
    ("docker", "docker"),
    ("git", "git"),
    ("aws", "aws"),
    ("gcloud", "gcloud"),
    ("helm", "helm"),
    ("redis", "redis-cli"),
    ("npm", "npm"),
];

fn mcp_effects(tool: &str, input: &Map<String, Value>, paths: &Paths, out: &mut CallEffects) {
    let mut parts = tool.splitn(3, "__");
    let _ = parts.next();
    let server = parts.next().unwrap_or("").to_ascii_lowercase();
    let name = parts.next().unwrap_or("").to_ascii_lowercase();
    let subject = format!(
        "{tool} {}",
        crate::otel::summary(&Value::Object(input.clone()))
    );
    let verb_in = |vs: &[&str]| {
        vs.iter()
            .any(|v| name.split(['_', '-', '.']).any(|w| w == *v) || name.starts_with(v))
    };
    let execs = verb_in(&[
        "exec",
        "execute",
        "run",
        "shell",
        "bash",
        "terminal",
        "command",
        "start_process",
        "start",
        "interact",
        "eval",
        "spawn",
    ]);
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    // A tool that runs a command: the command is shell.
    let command = s("command")
        .or_else(|| s("cmd"))
        .or_else(|| s("script"))
        .or_else(|| s("commandLine"));
    if let Some(cmd) = command
        && (execs
            || server.contains("shell")
            || server.contains("terminal")
            || server.contains("commander"))
        && server != "docker"
    {
        let cli = CLI_SERVERS
            .iter()
            .find(|(s, _)| server == *s)
            .map(|(_, c)| *c);
        let first = cmd.split_whitespace().next().unwrap_or("");
        let text = match cli {
            Some(c) if first != c => format!("{c} {cmd}"),
            _ => cmd.to_string(),
        };
        let cwd = s("cwd")
            .or_else(|| s("workdir"))
            .or_else(|| s("working_directory"));
        let mut shell_in = Map::new();
        shell_in.insert("command".into(), Value::String(text));
        if let Some(c) = cwd {
            shell_in.insert("cwd".into(), Value::String(c.to_string()));
        }
        let sub = of_call("run_shell", &shell_in, paths);
        out.effects.extend(sub.effects);
        out.lines.extend(sub.lines);
    }
    if server == "docker" && verb_in(&["run", "create"]) {
        let mut words = vec!["run".to_string()];
        if input.get("privileged").and_then(Value::as_bool) == Some(true) {
            words.push("--privileged".into());
        }
        for v in input
            .get("volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(v) = v.as_str() {
                words.push("-v".into());
                words.push(v.to_string());
            }
        }
        words.push(s("image").unwrap_or("image").to_string());
        if let Some(c) = command {
            words.push("sh".into());
            words.push("-c".into());
            words.push(c.to_string());
        }
        let text = format!(
            "docker {}",
            words
                .iter()
                .map(|w| crate::notice::shell_quote(std::path::Path::new(w)))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let sub = of_call(
            "run_shell",
            &Map::from_iter([("command".to_string(), Value::String(text))]),
            paths,
        );
        out.effects.extend(sub.effects);
    }
    // Every string argument, with the key it sits under.
    let mut strings = Vec::new();
    collect_strings("", &Value::Object(input.clone()), &mut strings, 0);
    let writes = verb_in(&[
        "write", "edit", "create", "update", "put", "save", "append", "upload", "move", "rename",
        "copy", "patch", "insert", "set", "push", "download",
    ]);
    // A tool that hands data to the address it is given: a form, a report, a
    // notification, a webhook, an upload.
    let sends = verb_in(&[
        "send", "submit", "post", "notify", "upload", "report", "publish", "webhook", "share",
        "email", "mail",
    ]);
    let deletes = verb_in(&[
        "delete",
        "remove",
        "rm",
        "unlink",
        "trash",
        "destroy",
        "drop",
        "purge",
        "wipe",
        "truncate",
        "terminate",
        "flush",
        "kill",
        "uninstall",
        "reset",
        "erase",
    ]);
    let fs_server = matches!(server.as_str(), "filesystem" | "fs" | "files" | "file");
    for (key, value) in &strings {
        let k = key.to_ascii_lowercase();
        // Secret material in the payload.
        if !fs_server && secret_material(value) {
            let e = out.push(Kind::SecretData, &subject);
            e.detail = key.clone();
            e.host = Some(server.clone());
        }
        // URLs. A `file:` URL (with or without `//`) opens a local file.
        if let Some(rest) = value
            .strip_prefix("file://")
            .or_else(|| value.strip_prefix("file:"))
        {
            let p = rest.replace("${HOME}", "~").replace("$HOME", "~");
            out.path(Kind::Read, paths.normalize(&p), &subject);
            continue;
        }
        if (value.starts_with("http://")
            || value.starts_with("https://")
            || value.starts_with("ws://")
            || value.starts_with("wss://"))
            && !value.contains(char::is_whitespace)
        {
            let host = url_host(value);
            let mut carried = Carried::new();
            if secret_in_url(value) {
                carried.insert("secret");
            }
            let body = strings.iter().any(|(bk, bv)| {
                let bk = bk.to_ascii_lowercase();
                (bk.ends_with("body")
                    || bk.ends_with("data")
                    || bk.ends_with("content")
                    || bk.ends_with("payload"))
                    && secret_material(bv)
            });
            if body {
                carried.insert("secret");
            }
            // Where the tool sends what it is given (or an address it is told to call
            // back), data leaves for that host.
            let callback = k.contains("callback")
                || k.contains("webhook")
                || k.contains("notify")
                || k.ends_with("hook_url");
            let payload = strings.iter().any(|(bk, _)| {
                let bk = bk.to_ascii_lowercase();
                bk != k
                    && [
                        "body", "data", "fields", "payload", "content", "message", "form",
                    ]
                    .iter()
                    .any(|w| bk.split(['.', '[', '_']).any(|p| p == *w))
            });
            if callback || (sends && payload) || (sends && k.contains("url")) {
                carried.insert("data");
            }
            for (bk, bv) in &strings {
                let bk = bk.to_ascii_lowercase();
                if bk.contains("file")
                    && bk != k
                    && (bv.starts_with('/') || bv.starts_with('~') || bv.starts_with("$HOME"))
                {
                    let p = paths.normalize(&bv.replace("$HOME", "~"));
                    let classes = paths.classes(&p);
                    if classes.secret {
                        carried.insert("secret");
                    }
                    carried.insert("file");
                }
            }
            let e = out.push(
                if carried.is_empty() {
                    Kind::Fetch
                } else {
                    Kind::Send
                },
                &subject,
            );
            e.host = host;
            e.carries = carried;
            continue;
        }
        // SQL.
        if (k.contains("sql")
            || k.contains("query")
            || k.contains("command")
            || k.contains("statement"))
            && drops_data(value)
        {
            out.push(Kind::SqlDrop, &subject).detail = value.chars().take(80).collect();
        }
        // Paths.
        let pathish_key = k.ends_with("path")
            || k.ends_with("paths")
            || matches!(
                k.as_str(),
                "source"
                    | "destination"
                    | "file"
                    | "filename"
                    | "dir"
                    | "directory"
                    | "target"
                    | "src"
                    | "dst"
                    | "dest"
                    | "from"
                    | "to"
                    | "body_file"
                    | "file_path"
                    | "filepath"
            );
        let pathish_value = value.starts_with('/')
            || value.starts_with("~/")
            || value == "~"
            || value.starts_with("$HOME");
        if !(pathish_key || pathish_value && fs_server)
            || value.contains('\n')
            || value.len() > 4096
        {
            continue;
        }
        if !fs_server && !pathish_value {
            // A repository path of a remote service (`keys/id_rsa` in a GitHub repo).
            continue;
        }
        let p = paths.normalize(&value.replace("${HOME}", "~").replace("$HOME", "~"));
        let is_dest = matches!(k.as_str(), "destination" | "target" | "dst" | "dest" | "to");
        let is_source = matches!(k.as_str(), "source" | "src" | "from");
        if deletes && !is_dest {
            out.path(Kind::Delete, p.clone(), &subject);
        }
        if name.contains("move") || name.contains("rename") {
            if is_source {
                out.path(Kind::Delete, p.clone(), &subject);
            }
            if is_dest {
                out.path(Kind::Write, p.clone(), &subject);
            }
            if is_source {
                out.path(Kind::Read, p, &subject);
            }
        } else if writes && !is_source {
            out.path(Kind::Write, p.clone(), &subject);
            if fs_server && let Some(content) = s("content") {
                written_content(&p, content, paths, out, &subject);
            }
        } else {
            out.path(Kind::Read, p, &subject);
        }
    }
    // Force-pushing through a git server.
    if verb_in(&["push"]) && input.get("force").and_then(Value::as_bool) == Some(true) {
        out.push(Kind::ForcePush, &subject).detail =
            s("branch").or_else(|| s("ref")).unwrap_or("").to_string();
    }
    if deletes && !fs_server && !execs {
        out.push(Kind::ToolVerb, &subject).detail = name.clone();
    }
    if deletes && fs_server && !out.effects.iter().any(|e| e.kind == Kind::Delete) {
        out.push(Kind::ToolVerb, &subject).detail = name.clone();
    }
}

fn collect_strings(key: &str, v: &Value, out: &mut Vec<(String, String)>, depth: u8) {
    if depth > 8 || out.len() > 512 {
        return;
    }
    match v {
        Value::String(s) => out.push((key.to_string(), s.clone())),
        Value::Array(a) => {
            for x in a {
                collect_strings(key, x, out, depth + 1);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                collect_strings(k, x, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// Whether text carries key material or a credential in a well-known shape.
pub(crate) fn secret_material(text: &str) -> bool {
    if text.contains("PRIVATE KEY-----")
        || text.contains("aws_secret_access_key")
        || text.contains("AWS_SECRET_ACCESS_KEY")
    {
        return true;
    }
    let has_token = |prefix: &str, min: usize| {
        text.match_indices(prefix).any(|(i, _)| {
            text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .count()
                >= min
        })
    };
    has_token("AKIA", 16)
        || has_token("ASIA", 16)
        || has_token("ghp_", 30)
        || has_token("gho_", 30)
        || has_token("ghs_", 30)
        || has_token("github_pat_", 30)
        || has_token("xoxb-", 20)
        || has_token("xoxp-", 20)
        || has_token("sk-ant-", 20)
        || has_token("sk-proj-", 20)
        || has_token("glpat-", 20)
        || has_token("npm_", 30)
}

/// Whether a URL carries a credential: key material, or a query parameter named for
/// one with a long value.
fn secret_in_url(url: &str) -> bool {
    if secret_material(url) {
        return true;
    }
    let Some((_, query)) = url.split_once('?') else {
        return false;
    };
    query.split('&').any(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let k = k.to_ascii_lowercase();
        v.len() >= 16
            && [
                "token",
                "secret",
                "password",
                "passwd",
                "apikey",
                "api_key",
                "access_key",
                "aws",
                "key",
                "auth",
                "session",
                "credential",
            ]
            .iter()
            .any(|n| k.contains(n))
    })
}
