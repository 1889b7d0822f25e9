//! The socket filter: a seccomp program, compiled in the parent with `seccompiler`,
//! installed in the child (one `prctl` and one `seccomp` syscall, no allocation).
//!
//! Landlock (up to ABI 7) restricts TCP bind/connect only: UDP, MPTCP (`IPPROTO_MPTCP`
//! sockets are TCP-like but not covered), `sendto(…, MSG_FASTOPEN)` on a TCP socket that
//! never called `connect`, raw and packet sockets all reach the network. So with
//! `network: false` the filter refuses to *create* any socket but a Unix one (`socket`
//! and `socketpair` with any other domain fail with `EACCES`), and refuses `io_uring_setup`
//! (io_uring can create sockets without the `socket` syscall). No socket, no traffic,
//! whatever the protocol or flag.
//!
//! For project hooks, creating a Unix socket with `socket(2)` is refused too (pathname
//! sockets outside the workspace — a tmux server, the Docker socket, an ssh-agent — and
//! abstract ones); `socketpair(2)` stays allowed (it reaches nothing outside the run).
//! Landlock has no right for *connecting* to a pathname socket on the kernels this code
//! knows, so confining connections to the workspace is done by not letting a project hook
//! create a Unix socket at all, unless the settings list sockets hooks may use
//! (`sandboxAllowedSockets`; see `docs/sandbox.md` for what that lifts).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The architecture the filter is compiled for, if seccompiler supports it.
fn target_arch() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Some(TargetArch::riscv64)
    } else {
        None
    }
}

/// Whether the kernel and this build can install the filter, or why not.
pub(super) fn availability() -> Result<(), String> {
    if target_arch().is_none() {
        return Err("no seccomp filter for this CPU architecture".to_owned());
    }
    // SAFETY: PR_GET_SECCOMP takes no pointer; it returns the calling thread's mode
    // (0: none) or fails with EINVAL when the kernel has no seccomp.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return Err("the kernel has no seccomp filters".to_owned());
    }
    Ok(())
}

/// What the filter refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Denials {
    /// Every socket but a Unix one (`network: false`).
    pub(super) network: bool,
    /// Unix sockets made with `socket(2)` (project hooks).
    pub(super) unix: bool,
}

/// Compiles the filter, `None` when there is nothing to refuse.
pub(super) fn compile(denials: Denials) -> Result<Option<BpfProgram>, String> {
    if !denials.network && !denials.unix {
        return Ok(None);
    }
    let arch = target_arch().ok_or("no seccomp filter for this CPU architecture")?;
    let domain = |op: SeccompCmpOp| -> Result<SeccompRule, String> {
        let condition = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            op,
            u64::try_from(libc::AF_UNIX).unwrap_or(1),
        )
        .map_err(|e| e.to_string())?;
        SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
    };
    let mut rules = Vec::new();
    // An empty rule list matches the syscall whatever its arguments.
    match (denials.network, denials.unix) {
        (true, true) => rules.push((libc::SYS_socket, Vec::new())),
        (true, false) => rules.push((libc::SYS_socket, vec![domain(SeccompCmpOp::Ne)?])),
        (false, true) => rules.push((libc::SYS_socket, vec![domain(SeccompCmpOp::Eq)?])),
        (false, false) => {}
    }
    if denials.network {
        rules.push((libc::SYS_socketpair, vec![domain(SeccompCmpOp::Ne)?]));
    }
    rules.push((libc::SYS_io_uring_setup, Vec::new()));
    let filter = SeccompFilter::new(
        rules.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(libc::EACCES).unwrap_or(13)),
        arch,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// In the child: installs `program` (which needs `PR_SET_NO_NEW_PRIVS`, set here too).
/// Async-signal-safe: `seccompiler::apply_filter` makes two raw syscalls with a struct on
/// the stack, and its errors carry only an errno.
pub(super) fn install(program: &BpfProgram) -> std::io::Result<()> {
    seccompiler::apply_filter(program).map_err(|err| match err {
        seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => {
            std::io::Error::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EINVAL))
        }
        _ => std::io::Error::from_raw_os_error(libc::EINVAL),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_every_combination() {
        if availability().is_err() {
            return;
        }
        assert_eq!(
            compile(Denials {
                network: false,
                unix: false
            }),
            Ok(None)
        );
        for (network, unix) in [(true, false), (false, true), (true, true)] {
            let program = compile(Denials { network, unix }).unwrap().unwrap();
            assert!(!program.is_empty());
        }
    }
}
