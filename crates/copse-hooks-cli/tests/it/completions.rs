//! `completions` and `man`, used as a user installs them: the generated bash script is
//! sourced in a real bash and its completion function called as bash calls it on
//! <TAB>; the fish script is asked with `complete -C`; the zsh script is loaded under
//! `compinit`. Every option `copse-hooks SUB --help` lists must be offered after
//! `copse-hooks SUB --`. The man pages are written where the install line puts them
//! and found by `man` with nothing but ~/.cargo/bin on PATH, and no page names a page
//! that does not exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::Env;

/// Whether `shell` is installed; a test that needs a missing one says so and passes
/// (CI installs bash, zsh and fish: .ci/run).
fn have(shell: &str) -> bool {
    Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn script(env: &Env, shell: &str) -> PathBuf {
    let r = env.cmd().args(["completions", shell]).run().success();
    env.write(format!("completions.{shell}"), &r.stdout())
}

/// The options `copse-hooks ARGS --help` lists (long and short).
fn help_options(env: &Env, args: &[&str]) -> BTreeSet<String> {
    let r = env.cmd().args(args).arg("--help").run().success();
    let mut out = BTreeSet::new();
    for line in r.stdout().lines() {
        let line = line.trim_start();
        if !line.starts_with('-') {
            continue;
        }
        for word in line.split([',', ' ']) {
            let word = word.split(['=', '[', '<']).next().unwrap_or("");
            if word.starts_with('-') && word.len() > 1 {
                out.insert(word.to_string());
            } else if !word.is_empty() {
                break;
            }
        }
    }
    assert!(out.contains("--help"), "{args:?}: {}", r.stdout());
    out
}

/// The subcommands `copse-hooks ARGS --help` lists (clap's `help` left out).
fn help_subcommands(env: &Env, args: &[&str]) -> Vec<String> {
    let r = env.cmd().args(args).arg("--help").run().success();
    let text = r.stdout();
    let Some((_, rest)) = text.split_once("Commands:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path: `[]`, `["gate"]`, …, `["daemon", "start"]`.
fn command_paths(env: &Env) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut i = 0;
    while i < out.len() {
        let path = out[i].clone();
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        for sub in help_subcommands(env, &args) {
            let mut p = path.clone();
            p.push(sub);
            out.push(p);
        }
        i += 1;
    }
    assert!(out.len() > 20, "{out:?}");
    out
}

/// Calls the bash completion function `complete -p copse-hooks` names, as bash does
/// on <TAB> with the cursor at the end of `words` (the last word being completed),
/// once per line of `lines`; prints each COMPREPLY as one line, words joined by
/// spaces.
fn bash_complete(script: &Path, lines: &[Vec<&str>]) -> Vec<BTreeSet<String>> {
    let mut program = format!(
        r#"source '{}'
spec=$(complete -p copse-hooks) || exit 10
fn=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
[ -n "$fn" ] || exit 11
comp() {{
  COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
  COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=()
  local prev=""; [ "$COMP_CWORD" -gt 0 ] && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  "$fn" copse-hooks "${{COMP_WORDS[COMP_CWORD]}}" "$prev"
  echo "${{COMPREPLY[*]}}"
}}
"#,
        script.display()
    );
    for words in lines {
        program.push_str("comp");
        for w in words {
            program.push_str(&format!(" '{w}'"));
        }
        program.push('\n');
    }
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let replies: Vec<BTreeSet<String>> = stdout
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(replies.len(), lines.len(), "{stdout}");
    replies
}

#[test]
fn bash_completes_every_option_of_every_subcommand() {
    if !have("bash") {
        eprintln!("bash is not installed: skipped");
        return;
    }
    let env = Env::new();
    let script = script(&env, "bash");
    let paths = command_paths(&env);
    let lines: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            std::iter::once("copse-hooks")
                .chain(p.iter().map(String::as_str))
                .chain(std::iter::once("--"))
                .collect()
        })
        .collect();
    let replies = bash_complete(&script, &lines);
    for (path, reply) in paths.iter().zip(&replies) {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let wanted: BTreeSet<String> = help_options(&env, &args)
            .into_iter()
            .filter(|o| o.starts_with("--"))
            .collect();
        let missing: Vec<&String> = wanted.difference(reply).collect();
        assert!(
            missing.is_empty(),
            "`copse-hooks {} --<TAB>` misses {missing:?}; offered {reply:?}",
            path.join(" ")
        );
        assert!(
            reply.iter().all(|w| w.starts_with("--")),
            "`copse-hooks {} --<TAB>` offers non-options: {reply:?}",
            path.join(" ")
        );
    }
}

#[test]
fn bash_completes_gate_options_subcommands_and_values() {
    if !have("bash") {
        eprintln!("bash is not installed: skipped");
        return;
    }
    let env = Env::new();
    let script = script(&env, "bash");
    let replies = bash_complete(
        &script,
        &[
            vec!["copse-hooks", "ga"],
            vec!["copse-hooks", "gate", "--"],
            vec!["copse-hooks", "--json", "gate", "run_shell", "--ex"],
            vec!["copse-hooks", "log", "--decision", ""],
            vec!["copse-hooks", "completions", ""],
            vec!["copse-hooks", "daemon", ""],
        ],
    );
    // The control: the function ran and completed a subcommand name.
    assert_eq!(replies[0], set(&["gate"]));
    for option in [
        "--input",
        "--exit-code",
        "--json",
        "--workspace",
        "--session",
    ] {
        assert!(replies[1].contains(option), "{option}: {:?}", replies[1]);
    }
    if help_options(&env, &["gate"]).contains("--explain") {
        assert!(replies[1].contains("--explain"), "{:?}", replies[1]);
        assert!(replies[2].contains("--explain"), "{:?}", replies[2]);
    }
    assert!(replies[2].contains("--exit-code"), "{:?}", replies[2]);
    assert!(
        replies[2].iter().all(|w| w.starts_with("--ex")),
        "{:?}",
        replies[2]
    );
    assert_eq!(replies[3], set(&["allow", "ask", "deny", "none", "failed"]));
    assert!(
        replies[4].is_superset(&set(&["bash", "zsh", "fish"])),
        "{:?}",
        replies[4]
    );
    assert!(
        replies[5].is_superset(&set(&["start", "stop", "status"])),
        "{:?}",
        replies[5]
    );
}

fn set(words: &[&str]) -> BTreeSet<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

#[test]
fn fish_completes_every_option_of_every_subcommand() {
    if !have("fish") {
        eprintln!("fish is not installed: skipped");
        return;
    }
    let env = Env::new();
    let script = script(&env, "fish");
    let paths = command_paths(&env);
    let mut program = format!("source '{}'\n", script.display());
    for path in &paths {
        program.push_str(&format!(
            "echo '=== {}'\ncomplete -C 'copse-hooks {} --'\n",
            path.join(" "),
            path.join(" ")
        ));
    }
    let out = Command::new("fish")
        .args(["--no-config", "-c", &program])
        .env("HOME", env.home())
        .env("XDG_CONFIG_HOME", env.root().join("xdg"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "fish: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let sections: Vec<&str> = stdout.split("=== ").skip(1).collect();
    assert_eq!(sections.len(), paths.len(), "{stdout}");
    for (path, section) in paths.iter().zip(sections) {
        let offered: BTreeSet<String> = section
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').next())
            .map(str::to_string)
            .collect();
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let wanted: BTreeSet<String> = help_options(&env, &args)
            .into_iter()
            .filter(|o| o.starts_with("--"))
            .collect();
        let missing: Vec<&String> = wanted.difference(&offered).collect();
        assert!(
            missing.is_empty(),
            "fish: `copse-hooks {} --<TAB>` misses {missing:?}; offered {offered:?}",
            path.join(" ")
        );
    }
}

#[test]
fn zsh_script_loads_and_names_every_option() {
    let env = Env::new();
    let script = script(&env, "zsh");
    let text = std::fs::read_to_string(&script).unwrap();
    // Text check (zsh or not): each subcommand's arm lists its own options.
    let gate_arm = text
        .split("(gate)\n")
        .nth(1)
        .and_then(|rest| rest.split("\n;;").next())
        .unwrap_or_default();
    for option in help_options(&env, &["gate"])
        .iter()
        .filter(|o| o.starts_with("--"))
    {
        assert!(
            gate_arm.contains(&format!("'{option}")) || gate_arm.contains(&format!("'*{option}")),
            "zsh gate arm misses {option}:\n{gate_arm}"
        );
    }
    if !have("zsh") {
        eprintln!("zsh is not installed: text checked only");
        return;
    }
    let program = format!(
        "autoload -Uz compinit && compinit -u -D\nsource '{}'\n\
         (( $+functions[_copse-hooks] )) || exit 10\n\
         [[ $_comps[copse-hooks] == _copse-hooks ]] || exit 11\necho loaded",
        script.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &program])
        .env("HOME", env.home())
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("loaded"),
        "zsh: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every `copse-hooks-…(1)` a page names (its subcommands section).
fn page_refs(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in page.match_indices("(1)") {
        let head = &page[..i];
        let start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '\\'))
            .map_or(0, |s| s + 1);
        let name = head[start..].replace("\\-", "-");
        if name.starts_with("copse-hooks") {
            out.push(name);
        }
    }
    out
}

#[test]
fn man_pages_exist_for_every_page_named_and_man_finds_them() {
    let env = Env::new();
    let cargo_bin = env.home().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    let dir = env.home().join(".cargo/share/man/man1");
    // The install line, as documented.
    let r = env
        .cmd()
        .args(["man", "--out-dir"])
        .arg(&dir)
        .run()
        .success();
    assert!(r.stdout().contains("man pages"), "{}", r.stdout());
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in [
        "copse-hooks.1",
        "copse-hooks-gate.1",
        "copse-hooks-log.1",
        "copse-hooks-daemon.1",
        "copse-hooks-daemon-start.1",
    ] {
        assert!(pages.iter().any(|p| p == want), "{want}: {pages:?}");
    }
    assert!(
        !pages.iter().any(|p| p.contains("-help")),
        "clap's help subcommand has no page: {pages:?}"
    );
    let mut named = 0;
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page}");
        for r in page_refs(&text) {
            named += 1;
            assert!(
                pages.contains(&format!("{r}.1")),
                "{page} names {r}(1), which was not written: {pages:?}"
            );
        }
    }
    assert!(named > 20, "the main page names each subcommand's page");
    // `man SUB` prints the one page; an unknown one is a clear error.
    let gate = env.cmd().args(["man", "gate"]).run().success();
    assert!(
        gate.stdout().contains("copse\\-hooks\\-gate"),
        "{}",
        gate.stdout()
    );
    let bad = env.cmd().args(["man", "gaet"]).run();
    assert_eq!(bad.out.status.code(), Some(2));
    assert!(
        bad.stderr().contains("has no subcommand \"gaet\""),
        "{}",
        bad.stderr()
    );
    assert!(bad.stderr().contains("gate"), "{}", bad.stderr());

    // man-db derives ~/.cargo/share/man from ~/.cargo/bin on PATH (as the README's
    // install leaves it), with no MANPATH set.
    let Ok(which) = Command::new("man").arg("--version").output() else {
        eprintln!("man is not installed: page lookup not checked");
        return;
    };
    if !which.status.success() {
        return;
    }
    for name in [
        "copse-hooks",
        "copse-hooks-gate",
        "copse-hooks-daemon-start",
    ] {
        let out = Command::new("man")
            .args(["-w", name])
            .env_clear()
            .env("HOME", env.home())
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", cargo_bin.display()),
            )
            .output()
            .unwrap();
        let found = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && found.trim() == dir.join(format!("{name}.1")).display().to_string(),
            "man -w {name}: {found}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The install line in docs/cli.md: bash-completion (where installed) finds the script
/// in ~/.local/share/bash-completion/completions on first use, with nothing else set.
#[test]
fn bash_completion_loads_the_installed_script_on_demand() {
    let loader = Path::new("/usr/share/bash-completion/bash_completion");
    if !have("bash") || !loader.is_file() {
        eprintln!("bash-completion is not installed: skipped");
        return;
    }
    let env = Env::new();
    let r = env.cmd().args(["completions", "bash"]).run().success();
    env.write(
        "home/.local/share/bash-completion/completions/copse-hooks",
        &r.stdout(),
    );
    let out = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            &format!(
                "source {}; __load_completion copse-hooks; complete -p copse-hooks",
                loader.display()
            ),
        ])
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("-F _copse__hooks copse-hooks"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
