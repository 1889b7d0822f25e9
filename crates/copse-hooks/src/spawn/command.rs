//! The portable launcher: `std::process::Command`. Used where there is no vfork launcher
//! (Unix other than Linux, which also has no parent-death signal to arm); compiled on
//! Linux too, so its unit test runs there.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::unix::Launched;
use super::{ChildSetup, SpawnRequest};

/// Starts `/bin/sh -c <command>` with `stdio` as its stdin, stdout and stderr, in its own
/// process group, with the [`ChildSetup`] applied. On return the child has exec'd (std
/// waits for that), so it already leads its group. Never yields a pidfd.
pub(super) fn launch(
    req: &SpawnRequest<'_>,
    stdio: &[OwnedFd; 3],
    _want_pidfd: bool,
) -> io::Result<Launched> {
    // std closes what it is given once the child has them; the caller keeps its own.
    let [stdin, stdout, stderr] = stdio.each_ref().map(OwnedFd::try_clone);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(req.command)
        .current_dir(req.cwd)
        .env_clear()
        .envs(req.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::from(stdin?))
        .stdout(Stdio::from(stdout?))
        .stderr(Stdio::from(stderr?))
        .process_group(0);
    // Without a setup std may use posix_spawn; any pre_exec forces a full fork.
    if let Some(setup) = req.child_setup {
        // SAFETY: the reference is only used by the pre_exec closure below, which lives in
        // `cmd`. `cmd` is a local dropped when this function returns, and the closure only
        // ever runs inside `cmd.spawn()` (in the forked child), both within the borrow 'a.
        let setup = unsafe { erase_lifetime(setup) };
        // SAFETY: the closure only runs the ChildSetup, whose contract requires
        // async-signal-safe calls only.
        unsafe {
            cmd.pre_exec(move || setup.apply_in_child());
        }
    }
    // The std `Child` is dropped here: that neither waits nor kills, and the supervisor
    // reaps the pid itself.
    let mut child = cmd.spawn()?;
    match libc::pid_t::try_from(child.id()) {
        Ok(pid) => Ok(Launched { pid, pidfd: None }),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(io::Error::other("child pid out of range"))
        }
    }
}

/// Extends the borrow of a [`ChildSetup`] to `'static`, as `pre_exec` requires.
///
/// # Safety
///
/// The caller must not use the returned reference after `'a` ends.
unsafe fn erase_lifetime<'a>(setup: &'a (dyn ChildSetup + 'a)) -> &'static dyn ChildSetup {
    // SAFETY: both types are the same fat pointer and differ only in lifetimes; the caller
    // guarantees the reference is not used past 'a.
    unsafe {
        std::mem::transmute::<&'a (dyn ChildSetup + 'a), &'static (dyn ChildSetup + 'static)>(setup)
    }
}
