//! The child's pipes: creation (close-on-exec, above stdio), non-blocking ends, and
//! the reads and writes of the poll loop.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::MIN_SPARE;

/// Our ends of the child's pipes, as created.
pub(super) struct Pipes {
    pub(super) stdin: OwnedFd,
    pub(super) stdout: OwnedFd,
    pub(super) stderr: OwnedFd,
}

/// Our ends of the child's pipes, ready for the poll loop.
pub(super) struct ParentEnds {
    /// `None` once everything was written (or there was nothing to write).
    pub(super) stdin: Option<OwnedFd>,
    /// Bytes of stdin already written.
    pub(super) stdin_written: usize,
    pub(super) stdout: OwnedFd,
    pub(super) stderr: OwnedFd,
}

/// Creates the three pipes: the child's ends (stdin, stdout, stderr) for the launcher, and
/// ours.
///
/// Everything is close-on-exec from birth, so a concurrent spawn on another thread cannot
/// leak our pipes into its child. The child's ends are kept above 2, so the launcher can
/// dup2 them onto 0, 1 and 2 in order without one clobbering another.
pub(super) fn pipes() -> io::Result<([OwnedFd; 3], Pipes)> {
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let child = [
        above_stdio(stdin_child)?,
        above_stdio(stdout_child)?,
        above_stdio(stderr_child)?,
    ];
    Ok((
        child,
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

impl Pipes {
    /// Makes our ends non-blocking and writes as much of `stdin` as the pipe takes.
    ///
    /// Called while the child's end of stdin is still open here too: the pipe has a
    /// reader whatever the child did, so this write cannot raise SIGPIPE. For the usual
    /// small payload it is the only write, and the poll loop never has to watch stdin (nor
    /// guard against SIGPIPE) at all.
    pub(super) fn ready(self, stdin: &[u8]) -> io::Result<ParentEnds> {
        // Only our ends become non-blocking: the child's ends are separate open file
        // descriptions and keep their blocking semantics.
        set_nonblocking(&self.stdout)?;
        set_nonblocking(&self.stderr)?;
        let (stdin_fd, stdin_written) = if stdin.is_empty() {
            // Nothing to write: closing now gives the child an immediate EOF.
            (None, 0)
        } else {
            set_nonblocking(&self.stdin)?;
            let mut written = 0;
            write_some(&self.stdin, stdin, &mut written)?;
            ((written < stdin.len()).then_some(self.stdin), written)
        };
        Ok(ParentEnds {
            stdin: stdin_fd,
            stdin_written,
            stdout: self.stdout,
            stderr: self.stderr,
        })
    }
}

/// A close-on-exec pipe: (read end, write end).
#[cfg(not(target_vendor = "apple"))]
pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A close-on-exec pipe: (read end, write end).
///
/// Apple has no pipe2, so close-on-exec is set right after: a fork on another thread in
/// between could still inherit the fds (std's own pipes have the same window there).
#[cfg(target_vendor = "apple")]
pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let ends = rustix::pipe::pipe()?;
    for fd in [&ends.0, &ends.1] {
        rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
    }
    Ok(ends)
}

/// `fd`, or a close-on-exec duplicate of it above 2 when it sits on 0, 1 or 2 (only
/// possible when the host closed its own stdio).
pub(super) fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// Makes a fresh pipe end non-blocking. F_SETFL replaces all the file status flags and a
/// fresh pipe has none, so there is nothing to read back first with F_GETFL.
pub(super) fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    Ok(rustix::fs::fcntl_setfl(fd, rustix::fs::OFlags::NONBLOCK)?)
}

/// Writes as much of `data[*written..]` as the non-blocking pipe `fd` accepts right now,
/// counting in `written` (which stays exact when an error cuts the write short).
///
/// Errors, EPIPE included (the reader is gone), are returned as they are: whether one is
/// possible, and what it means, is the caller's to know.
pub(super) fn write_some(fd: &OwnedFd, data: &[u8], written: &mut usize) -> io::Result<()> {
    while let Some(rest) = data.get(*written..).filter(|rest| !rest.is_empty()) {
        match rustix::io::write(fd, rest) {
            Ok(n) => *written += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => break,
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

pub(super) enum Read {
    /// Some bytes were appended.
    Data,
    Eof,
    WouldBlock,
}

/// One `read(2)` of at most `max` bytes from `fd`, appended to `buf`.
///
/// Reads straight into the spare capacity: no scratch buffer to zero and copy out of.
/// `buf` only grows when its spare capacity is below [`MIN_SPARE`] (or `max`), so the
/// final read that only finds EOF does not reallocate.
pub(super) fn read_into(fd: &OwnedFd, buf: &mut Vec<u8>, max: usize) -> io::Result<Read> {
    if buf.capacity() - buf.len() < max.min(MIN_SPARE) {
        buf.reserve(max);
    }
    loop {
        let spare = buf.spare_capacity_mut();
        let len = max.min(spare.len());
        let Some(spare) = spare.get_mut(..len) else {
            return Ok(Read::WouldBlock);
        };
        match rustix::io::read(fd, spare) {
            Ok(([], _)) => return Ok(Read::Eof),
            Ok((filled, _)) => {
                let n = filled.len();
                // SAFETY: read(2) initialised the first `n` <= `len` bytes of the spare
                // capacity, which directly follow the current contents.
                unsafe { buf.set_len(buf.len() + n) };
                return Ok(Read::Data);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => return Ok(Read::WouldBlock),
            Err(err) => return Err(err.into()),
        }
    }
}
