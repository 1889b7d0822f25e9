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
//!
//! On x86_64 every x32 system call (number with bit 30, `__X32_SYSCALL_BIT`, set) is
//! refused too: the x32 ABI reaches the same kernel functions under other numbers
//! (`socket` is `0x40000029`), which the rules above, written for the native numbers,
//! would let through. The check is a prefix of our own before `seccompiler`'s program
//! (whose jumps are relative, so prepending keeps them right).

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
    let program = BpfProgram::try_from(filter).map_err(|e| e.to_string())?;
    Ok(Some(deny_x32(program)))
}

/// The `__X32_SYSCALL_BIT`.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// `AUDIT_ARCH_X86_64`, the architecture x32 calls report too.
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

/// `program` behind a prefix that refuses (`EACCES`) every x32 system call on x86_64.
/// Elsewhere there is no such alias and `program` is returned as it is.
fn deny_x32(program: BpfProgram) -> BpfProgram {
    use seccompiler::sock_filter;
    if !cfg!(target_arch = "x86_64") {
        return program;
    }
    // Classic BPF opcodes (linux/filter.h).
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    // Offsets into `struct seccomp_data`: nr at 0, arch at 4.
    let insn = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let eacces = u32::try_from(libc::EACCES).unwrap_or(13);
    let mut out = vec![
        insn(LD_W_ABS, 0, 0, 4),
        // Another architecture: straight to seccompiler's program (which refuses it).
        insn(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        insn(LD_W_ABS, 0, 0, 0),
        insn(JGE_K, 0, 1, X32_SYSCALL_BIT),
        insn(RET_K, 0, 0, SECCOMP_RET_ERRNO | eacces),
    ];
    out.extend(program);
    out
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

    /// A minimal classic-BPF interpreter for the instructions our programs use, run on
    /// `seccomp_data` with `nr` and `arch`; returns the action.
    #[cfg(target_arch = "x86_64")]
    fn evaluate(program: &BpfProgram, nr: u32, arch: u32, arg0: u64) -> u32 {
        let data = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                16 => arg0 as u32,
                20 => (arg0 >> 32) as u32,
                _ => 0,
            }
        };
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let i = &program[pc];
            let jump = |taken: bool| pc + 1 + usize::from(if taken { i.jt } else { i.jf });
            pc = match i.code {
                0x20 => {
                    acc = data(i.k);
                    pc + 1
                }
                0x06 => return i.k,
                0x05 => pc + 1 + i.k as usize,
                0x15 => jump(acc == i.k),
                0x25 => jump(acc > i.k),
                0x35 => jump(acc >= i.k),
                0x45 => jump(acc & i.k != 0),
                other => panic!("opcode {other:#x} not modelled"),
            };
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn x32_system_calls_are_refused() {
        let program = compile(Denials {
            network: false,
            unix: true,
        })
        .unwrap()
        .unwrap();
        let errno = 0x0005_0000 | libc::EACCES as u32;
        let allow = 0x7fff_0000;
        let socket = libc::SYS_socket as u32;
        let unix = libc::AF_UNIX as u64;
        let inet = libc::AF_INET as u64;
        assert_eq!(evaluate(&program, socket, AUDIT_ARCH_X86_64, unix), errno);
        assert_eq!(evaluate(&program, socket, AUDIT_ARCH_X86_64, inet), allow);
        assert_eq!(
            evaluate(&program, X32_SYSCALL_BIT | socket, AUDIT_ARCH_X86_64, unix),
            errno,
            "x32 socket(AF_UNIX) slipped through"
        );
        assert_eq!(
            evaluate(&program, X32_SYSCALL_BIT | 39, AUDIT_ARCH_X86_64, 0),
            errno,
            "x32 getpid slipped through"
        );
        assert_eq!(evaluate(&program, 39, AUDIT_ARCH_X86_64, 0), allow);
    }
}
