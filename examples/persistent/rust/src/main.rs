//! `guard-shell`: the policy of `examples/copse/hooks/guard-shell.sh` as a Rust hook —
//! deny deleting `/` or the home directory, deny piping a download into a shell, ask
//! before a force push. Runs per call by default and persistent with `--persistent`
//! (or `COPSE_HOOK_PERSISTENT=1`): the same function serves both.

use std::process::ExitCode;

use copse_hooks_wire::hook::{CopseRequest, CopseResponse, Outcome, run};

/// The answer for one shell command (`None`: no objection).
fn verdict(command: &str) -> Option<CopseResponse> {
    let rm_root = command == "rm -rf /" || command.starts_with("rm -rf / ");
    if rm_root || command.contains("rm -rf ~") || command.contains("rm -rf $HOME") {
        return Some(
            CopseResponse::deny("Refusing to delete the root or home directory.")
                .with_user_message("Blocked a recursive delete of / or your home directory."),
        );
    }
    let piped = ["curl ", "wget "].iter().any(|fetch| {
        command.find(fetch).is_some_and(|at| {
            let rest = &command[at + fetch.len()..];
            rest.contains("| sh") || rest.contains("| bash")
        })
    });
    if piped {
        return Some(
            CopseResponse::deny(
                "Piping a download into a shell runs unreviewed code; download it, show it, then ask.",
            )
            .with_user_message("Blocked piping a download into a shell."),
        );
    }
    if command.contains("git push --force") || command.contains("git push -f") {
        return Some(
            CopseResponse::ask(
                "A force push rewrites the remote branch; the user must confirm it.",
            )
            .with_user_message("This command force-pushes. Confirm to continue."),
        );
    }
    None
}

fn main() -> ExitCode {
    run(&["toolGate"], |req: CopseRequest| {
        match req.shell_command().and_then(verdict) {
            Some(answer) => Outcome::Respond(answer),
            None => Outcome::Nothing,
        }
    })
}
