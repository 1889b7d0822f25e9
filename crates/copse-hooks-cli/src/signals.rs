//! Termination by INT, TERM or HUP: the hooks of the runs in progress are killed (their
//! whole pid namespaces where runs are contained), their private temp dirs removed, and
//! the process exits with the conventional status 128 + the signal number.
//!
//! The three signals are blocked in every thread (set before any other thread starts,
//! so all inherit the mask; a hook's child resets its mask before exec) and taken by one
//! thread with `sigwait`, so the work runs as ordinary code, not in a signal handler.
//! A host killed by SIGKILL cannot do any of this: there, each hook's parent-death
//! signal ends its pid namespace, and the next start reclaims the temp dirs left behind.

use std::io::Write;

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handling thread. Call first thing in `main`, before any thread exists.
pub fn install() {
    // SAFETY: all-zeroes is a valid sigset_t; sigemptyset/sigaddset initialise it and
    // pthread_sigmask only reads it (the old mask is not wanted).
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new()
        .name("copse-hooks-signals".to_owned())
        .spawn(move || {
            loop {
                let mut signal: libc::c_int = 0;
                // SAFETY: `set` and `signal` are valid for the call; sigwait only reads
                // the set and writes the signal number.
                if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                    continue;
                }
                terminate(signal);
            }
        });
    if spawned.is_err() {
        // No thread to take them: let the signals act as before (terminate the process;
        // the hooks' parent-death signal still ends them).
        // SAFETY: as above; unblocking restores the default behaviour.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

fn terminate(signal: libc::c_int) -> ! {
    copse_hooks::spawn::kill_all();
    copse_hooks::sandbox::remove_private_tmpdirs();
    let _ = std::io::stdout().flush();
    std::process::exit(128 + signal);
}
