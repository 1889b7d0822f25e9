//! One freshness check per gate: which cached configs may be served without a `stat`.
//!
//! A [`Freshness`] belongs to one [`super::Registry`]. Its first loads do nothing
//! here: a one-shot CLI gate loads twice (the notices of `Engine::explain`, then the
//! gate) and must pay for no watch it never uses. Its third load
//! ([`SUBSCRIBE_AT_LOAD`]) subscribes the registry to the process's one inotify instance (one per process, not
//! per engine: inotify instances are a per-user limit, 128 by default, that a daemon
//! with many warm engines would otherwise eat into). From then on a load costs one
//! non-blocking read of the inotify descriptor (draining whatever is pending for every
//! registry of the process) and a comparison of counters:
//!
//! - nothing relevant to this registry arrived → the same generation: every slot that
//!   was verified under it is served from its cache, without any `stat`;
//! - a relevant event, a queue overflow (`IN_Q_OVERFLOW`) or a race seen while
//!   subscribing → a new generation: every slot is `stat`ed again at its next load (and
//!   re-read if its identity changed), after the watches were re-established
//!   (directories may have appeared or vanished).
//!
//! What is watched, per config location: its parent directory and grandparent when the
//! parent exists (the workspace root or the home directory for the usual
//! `<dir>/.<vendor>/<file>`), else its deepest existing ancestor directory; and the file
//! itself when it exists (so a hard link made later, or a write through another link,
//! is seen). A directory watch only counts events for the names that lead to a config
//! (a file changing beside `.cursor/` in a workspace root is not an event for us),
//! while any event about a watched directory itself (deleted, moved, `chmod`ed) or
//! about a watched config file is. Each watch is added before the entry below it is
//! examined, so a change after the examination is always an event.
//!
//! A slot that inotify cannot vouch for is `stat`ed at every load, as before this
//! module existed: the config or one of its ancestors is a symbolic link (a watch on
//! the link's directory does not see its target change), the file has more than one
//! hard link (checked at each `stat`, by the caller), the file or a watched directory is
//! on a network or user-space filesystem whose changes may come from elsewhere (NFS,
//! SMB/CIFS, FUSE, 9p, Ceph, AFS, Coda, GFS2, OCFS2, Lustre), a watch could not be
//! added (`ENOSPC` from `max_user_watches`, `EACCES`), or the path is relative. No
//! inotify at all (creating the instance failed, a read error, not Linux) → every
//! slot is `stat`ed at every load.
//!
//! There is no race window for a writer in or out of this process: the kernel queues
//! the inotify event inside the `write`, `rename`, `unlink` or `chmod` syscall itself,
//! before the call returns, so a gate that starts after the edit returned reads the
//! event. Not seen (as with any inotify user): writes through a shared `mmap`, and the
//! rename of a directory above the watched ones (the workspace root's parent).
//!
//! The descriptor is `CLOEXEC`, so hooks never hold it. A child forked without an
//! `exec` inherits the watcher and shares its queue with the parent, so each could
//! read away events the other needed: nothing in this workspace forks without an
//! `exec`, and a host that does must not gate in the child.
//!
//! The non-blocking read of the inotify descriptor is not a config file access; the
//! `lstat`, `statfs`, `realpath` and `inotify_add_watch` calls made while subscribing
//! are, and are counted through the registry's seam.

use std::sync::{Arc, Mutex, MutexGuard};

use super::Slot;

/// The generation a load runs under and which slots inotify vouches for.
#[derive(Debug, Clone)]
pub(super) struct Fresh {
    /// Bumped after every relevant change; a slot verified under the current
    /// generation may skip its `stat`.
    pub(super) generation: u64,
    /// Per slot (registry order): whether inotify watches cover it.
    watched: Arc<[bool]>,
}

impl Fresh {
    /// Whether slot `index` is covered by the watches of this generation.
    pub(super) fn watches(&self, index: usize) -> bool {
        self.watched.get(index).copied().unwrap_or(false)
    }
}

/// The load that sets up the watches. A one-shot `copse-hooks gate` loads twice;
/// a long-lived engine pays one more round of `stat`s than it would at 2.
pub(super) const SUBSCRIBE_AT_LOAD: u32 = 3;

/// A registry's freshness state.
#[derive(Debug, Default)]
pub(super) struct Freshness {
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    /// Loaded this many times (the load that makes it [`SUBSCRIBE_AT_LOAD`]
    /// subscribes).
    Loaded(u32),
    /// No inotify for this registry: every load `stat`s.
    Off,
    /// Subscribed to the process's watcher.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    On(Subscription),
}

#[derive(Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Subscription {
    /// This registry's id in the watcher.
    id: u64,
    /// The watcher's change count for `id` when the watches were last established.
    seen: u64,
    /// The watch descriptors this registry has an interest in.
    wds: Vec<i32>,
    generation: u64,
    watched: Arc<[bool]>,
}

impl Default for State {
    fn default() -> State {
        State::Loaded(0)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here leaves its data consistent (counters and maps
    // updated whole), so a panic elsewhere does not make the state unusable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Freshness {
    /// The freshness check of one load: `None` when every slot must be `stat`ed.
    /// `count` is called once per filesystem touch made while subscribing.
    pub(super) fn check(&self, slots: &[Slot], count: &dyn Fn()) -> Option<Fresh> {
        let mut state = lock(&self.state);
        match &mut *state {
            State::Loaded(n) if *n + 1 < SUBSCRIBE_AT_LOAD => {
                *n += 1;
                None
            }
            State::Off => None,
            State::Loaded(_) => {
                let sub = imp::subscribe(slots, count);
                let fresh = sub.as_ref().map(|s| Fresh {
                    generation: s.generation,
                    watched: Arc::clone(&s.watched),
                });
                *state = sub.map_or(State::Off, State::On);
                fresh
            }
            State::On(sub) => {
                if imp::refresh(sub, slots, count) {
                    Some(Fresh {
                        generation: sub.generation,
                        watched: Arc::clone(&sub.watched),
                    })
                } else {
                    *state = State::Off;
                    None
                }
            }
        }
    }
}

impl Drop for Freshness {
    fn drop(&mut self) {
        if let State::On(sub) = &*lock(&self.state) {
            imp::unsubscribe(sub);
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::{HashMap, HashSet};
    use std::ffi::CStr;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};

    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    use super::{Slot, Subscription, lock};

    /// What a directory watch reports: changes of the entries inside it and of the
    /// directory itself. `DONT_FOLLOW` and `ONLYDIR`: a directory swapped for a symbolic
    /// link since it was examined fails the watch instead of watching the target.
    const DIR_MASK: WatchFlags = WatchFlags::MODIFY
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::CREATE)
        .union(WatchFlags::DELETE)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::ONLYDIR)
        .union(WatchFlags::DONT_FOLLOW);

    /// What a config file's own watch reports: its content, mode, owner and link count
    /// (`IN_ATTRIB`, whichever path or link the change came through), and its removal.
    const FILE_MASK: WatchFlags = WatchFlags::MODIFY
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::DONT_FOLLOW);

    /// `statfs` `f_type`s of filesystems where a change may come from another machine
    /// or a user-space server, out of the local kernel's sight: NFS, SMB, CIFS, SMB2,
    /// FUSE (and virtiofs), 9p, Ceph, AFS (two), Coda, GFS2, OCFS2, Lustre.
    const REMOTE_FS: [u32; 13] = [
        0x6969,
        0x517B,
        0xFF53_4D42,
        0xFE53_4D42,
        0x6573_5546,
        0x0102_1997,
        0x00C3_6400,
        0x5346_414F,
        0x6B41_4653,
        0x7375_7245,
        0x0116_1970,
        0x7461_636F,
        0x0BD0_0BD0,
    ];

    /// Which events on one watch concern one registry.
    #[derive(Debug, Default)]
    struct Interest {
        /// Entry names inside a watched directory that lead to a config location.
        names: HashSet<Vec<u8>>,
        /// Every event counts (the watch is on a config file).
        whole: bool,
    }

    /// The process's inotify instance and who listens to what.
    struct Watcher {
        fd: OwnedFd,
        /// Per watch descriptor, per registry id: what that registry cares about.
        watches: HashMap<i32, HashMap<u64, Interest>>,
        /// Per registry id: how many relevant events (or overflows) it was sent.
        changes: HashMap<u64, u64>,
        next_id: u64,
        /// A read of the descriptor failed with something else than "nothing
        /// pending": nothing can be trusted to it any more.
        broken: bool,
    }

    fn watcher() -> Option<&'static Mutex<Watcher>> {
        static WATCHER: OnceLock<Option<Mutex<Watcher>>> = OnceLock::new();
        WATCHER
            .get_or_init(|| {
                // CLOEXEC: hooks never inherit it; NONBLOCK: the per-gate read returns
                // at once when nothing is pending.
                let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
                Some(Mutex::new(Watcher {
                    fd,
                    watches: HashMap::new(),
                    changes: HashMap::new(),
                    next_id: 1,
                    broken: false,
                }))
            })
            .as_ref()
    }

    impl Watcher {
        /// Reads every pending event (one `read` when nothing is pending) and counts
        /// the relevant ones for each registry.
        fn drain(&mut self) {
            if self.broken {
                return;
            }
            // Large enough for many events; at least one event with the longest name.
            let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
            let Watcher {
                fd,
                watches,
                changes,
                broken,
                ..
            } = self;
            let mut reader = inotify::Reader::new(&*fd, &mut buf);
            loop {
                match reader.next() {
                    Ok(event) => note(
                        watches,
                        changes,
                        event.wd(),
                        event.events(),
                        event.file_name(),
                    ),
                    Err(Errno::AGAIN) => break,
                    Err(Errno::INTR) => {}
                    Err(_) => {
                        *broken = true;
                        break;
                    }
                }
            }
        }

        fn bump(&mut self, id: u64) {
            *self.changes.entry(id).or_default() += 1;
        }

        /// Drops registry `id`'s interest in `wds`, removing the watches nobody needs.
        fn release(&mut self, id: u64, wds: &[i32]) {
            for wd in wds {
                if let Some(subs) = self.watches.get_mut(wd) {
                    subs.remove(&id);
                    if subs.is_empty() {
                        self.watches.remove(wd);
                        // An error only means the watch is already gone (its directory
                        // was deleted and `IN_IGNORED` is on its way).
                        let _ = inotify::remove_watch(&self.fd, *wd);
                    }
                }
            }
        }
    }

    /// Counts one event for the registries it concerns.
    fn note(
        watches: &mut HashMap<i32, HashMap<u64, Interest>>,
        changes: &mut HashMap<u64, u64>,
        wd: i32,
        mask: ReadFlags,
        name: Option<&CStr>,
    ) {
        if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
            // Events were lost: every registry re-examines everything.
            changes.values_mut().for_each(|c| *c += 1);
            return;
        }
        let Some(subs) = watches.get(&wd) else {
            return; // a watch released since (its `IN_IGNORED`, or a late event)
        };
        let name = name.map(CStr::to_bytes);
        for (id, interest) in subs {
            let relevant = match name {
                // The watched directory or file itself: deleted, moved, chmod'ed,
                // unmounted, or the watch removed by the kernel.
                None => true,
                Some(n) => interest.whole || interest.names.contains(n),
            };
            if relevant {
                *changes.entry(*id).or_default() += 1;
            }
        }
        if mask.contains(ReadFlags::IGNORED) {
            watches.remove(&wd);
        }
    }

    /// One subscription being built: the watches added and what this registry wants
    /// from each, with what this pass already learnt about each directory.
    struct Pass<'a> {
        watcher: &'a mut Watcher,
        count: &'a dyn Fn(),
        interest: HashMap<i32, Interest>,
        /// `lstat` of an ancestor: a directory (not a link), or why not.
        kinds: HashMap<PathBuf, Result<bool, Errno>>,
        /// Directory → its watch, `None` when it cannot be trusted.
        dirs: HashMap<PathBuf, Option<i32>>,
        /// Directory → whether it is its own canonical path (no link above it).
        canonical: HashMap<PathBuf, bool>,
        /// Something changed under the walk: re-examine at the next load.
        raced: bool,
    }

    fn is_remote(path: &Path) -> bool {
        match rustix::fs::statfs(path) {
            // The magic numbers are 32-bit; `f_type`'s width and sign vary by target.
            Ok(fs) => {
                let magic = i128::from(fs.f_type) & 0xFFFF_FFFF;
                REMOTE_FS.iter().any(|m| i128::from(*m) == magic)
            }
            Err(_) => true,
        }
    }

    impl Pass<'_> {
        /// Whether `dir` is an existing directory (`Ok(true)`), absent
        /// (`Err(NOENT)`), or something inotify cannot vouch for.
        fn is_dir(&mut self, dir: &Path) -> Result<bool, Errno> {
            if let Some(known) = self.kinds.get(dir) {
                return *known;
            }
            (self.count)();
            let kind = rustix::fs::lstat(dir)
                .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir());
            self.kinds.insert(dir.to_path_buf(), kind);
            kind
        }

        /// Whether no component of `dir` is a symbolic link.
        fn is_canonical(&mut self, dir: &Path) -> bool {
            if let Some(known) = self.canonical.get(dir) {
                return *known;
            }
            (self.count)();
            let same = std::fs::canonicalize(dir).ok().as_deref() == Some(dir);
            self.canonical.insert(dir.to_path_buf(), same);
            same
        }

        /// Watches directory `dir`, once per pass. `top`: the highest watched
        /// directory of a location, whose own ancestors must not be links either.
        fn dir(&mut self, dir: &Path, top: bool) -> Option<i32> {
            if top && !self.is_canonical(dir) {
                return None;
            }
            if let Some(known) = self.dirs.get(dir) {
                return *known;
            }
            (self.count)();
            let wd = if is_remote(dir) {
                None
            } else {
                (self.count)();
                inotify::add_watch(&self.watcher.fd, dir, DIR_MASK).ok()
            };
            if let Some(wd) = wd {
                self.watcher.watches.entry(wd).or_default();
            }
            self.dirs.insert(dir.to_path_buf(), wd);
            wd
        }

        fn want(&mut self, wd: i32, name: Option<&std::ffi::OsStr>) {
            let interest = self.interest.entry(wd).or_default();
            match name {
                Some(n) => {
                    interest.names.insert(n.as_bytes().to_vec());
                }
                None => interest.whole = true,
            }
        }

        /// Watches what location `path` depends on; whether inotify covers it.
        fn location(&mut self, path: &Path) -> bool {
            if !path.is_absolute() || path.file_name().is_none() {
                return false;
            }
            // Ancestors from the parent up: the deepest one that exists.
            let chain: Vec<&Path> = path.ancestors().skip(1).collect();
            let mut deepest = None;
            for (i, dir) in chain.iter().enumerate() {
                match self.is_dir(dir) {
                    Ok(true) => {
                        deepest = Some(i);
                        break;
                    }
                    Err(Errno::NOENT) => {}
                    // A link, a file where a directory should be, no permission.
                    _ => return false,
                }
            }
            let Some(deepest) = deepest else {
                return false;
            };
            // The grandparent too when the parent exists: the parent's own rename or
            // deletion is then an event by name as well as one on itself.
            let top = if deepest == 0 && chain.len() > 1 {
                1
            } else {
                deepest
            };
            // Top down, each watch in place before the entry below it is examined.
            for i in (deepest..=top).rev() {
                let child = if i == 0 {
                    path.file_name()
                } else {
                    chain[i - 1].file_name()
                };
                let Some(wd) = self.dir(chain[i], i == top) else {
                    return false;
                };
                self.want(wd, child);
            }
            if deepest > 0 {
                // Created between the walk and the watch: no event will say so.
                (self.count)();
                if !matches!(rustix::fs::lstat(chain[deepest - 1]), Err(Errno::NOENT)) {
                    self.raced = true;
                }
                return true;
            }
            (self.count)();
            match rustix::fs::lstat(path) {
                Ok(st) => {
                    let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
                    if kind.is_symlink() {
                        return false;
                    }
                    if !kind.is_file() {
                        // Never read (a warning names it); its replacement is an event
                        // in the parent.
                        return true;
                    }
                    (self.count)();
                    if is_remote(path) {
                        return false;
                    }
                    (self.count)();
                    match inotify::add_watch(&self.watcher.fd, path, FILE_MASK) {
                        Ok(wd) => {
                            self.watcher.watches.entry(wd).or_default();
                            self.want(wd, None);
                            true
                        }
                        // Removed since the `lstat`: the parent's watch saw it go.
                        Err(Errno::NOENT) => true,
                        Err(_) => false,
                    }
                }
                Err(Errno::NOENT) => true,
                Err(_) => false,
            }
        }
    }

    /// (Re-)establishes registry `id`'s watches over `slots`, replacing `old`.
    fn establish(
        watcher: &mut Watcher,
        id: u64,
        old: &[i32],
        slots: &[Slot],
        count: &dyn Fn(),
    ) -> (Vec<i32>, Arc<[bool]>) {
        let mut pass = Pass {
            watcher,
            count,
            interest: HashMap::new(),
            kinds: HashMap::new(),
            dirs: HashMap::new(),
            canonical: HashMap::new(),
            raced: false,
        };
        let watched: Arc<[bool]> = slots
            .iter()
            .map(|s| pass.location(&s.location.path))
            .collect();
        let Pass {
            watcher,
            interest,
            raced,
            ..
        } = pass;
        if raced {
            watcher.bump(id);
        }
        let wds: Vec<i32> = interest.keys().copied().collect();
        let gone: Vec<i32> = old
            .iter()
            .copied()
            .filter(|wd| !interest.contains_key(wd))
            .collect();
        for (wd, want) in interest {
            watcher.watches.entry(wd).or_default().insert(id, want);
        }
        watcher.release(id, &gone);
        // A watch this pass added that no registry wants (none today: every watch added
        // is wanted at once; kept so a later change cannot leak watches).
        let orphans: Vec<i32> = watcher
            .watches
            .iter()
            .filter(|(_, subs)| subs.is_empty())
            .map(|(wd, _)| *wd)
            .collect();
        for wd in orphans {
            watcher.watches.remove(&wd);
            let _ = inotify::remove_watch(&watcher.fd, wd);
        }
        (wds, watched)
    }

    /// The [`super::SUBSCRIBE_AT_LOAD`]th load: subscribe to the process's watcher.
    pub(super) fn subscribe(slots: &[Slot], count: &dyn Fn()) -> Option<Subscription> {
        let mut watcher = lock(watcher()?);
        if watcher.broken {
            return None;
        }
        let id = watcher.next_id;
        watcher.next_id += 1;
        watcher.changes.insert(id, 0);
        let (wds, watched) = establish(&mut watcher, id, &[], slots, count);
        Some(Subscription {
            id,
            seen: 0,
            wds,
            generation: 1,
            watched,
        })
    }

    /// Every later load: drain the descriptor; on a relevant change, a new generation
    /// and fresh watches. `false`: inotify is no longer usable.
    pub(super) fn refresh(sub: &mut Subscription, slots: &[Slot], count: &dyn Fn()) -> bool {
        let Some(watcher) = watcher() else {
            return false;
        };
        let mut watcher = lock(watcher);
        watcher.drain();
        if watcher.broken {
            watcher.release(sub.id, &sub.wds);
            watcher.changes.remove(&sub.id);
            return false;
        }
        let now = watcher.changes.get(&sub.id).copied().unwrap_or(0);
        if now != sub.seen {
            // Taken before the new walk: a race it notices bumps past it.
            sub.seen = now;
            let (wds, watched) = establish(&mut watcher, sub.id, &sub.wds, slots, count);
            sub.wds = wds;
            sub.watched = watched;
            sub.generation += 1;
        }
        true
    }

    pub(super) fn unsubscribe(sub: &Subscription) {
        if let Some(watcher) = watcher() {
            let mut watcher = lock(watcher);
            watcher.release(sub.id, &sub.wds);
            watcher.changes.remove(&sub.id);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::ffi::CString;

        #[test]
        fn an_event_counts_for_the_registries_it_concerns() {
            let name = |n: &str| CString::new(n).unwrap();
            let in_dir = Interest {
                names: HashSet::from([b"hooks.json".to_vec()]),
                whole: false,
            };
            let on_file = Interest {
                names: HashSet::new(),
                whole: true,
            };
            let mut watches = HashMap::from([
                (7, HashMap::from([(1, in_dir)])),
                (8, HashMap::from([(2, on_file)])),
            ]);
            let mut changes = HashMap::from([(1, 0), (2, 0)]);
            let (w, c) = (&mut watches, &mut changes);
            note(w, c, 7, ReadFlags::MODIFY, Some(&name("notes.txt")));
            note(w, c, 7, ReadFlags::CREATE, Some(&name("hooks.json.tmp")));
            note(w, c, 9, ReadFlags::MODIFY, Some(&name("hooks.json")));
            note(w, c, 8, ReadFlags::ACCESS, Some(&name("hooks.json")));
            assert_eq!(changes, HashMap::from([(1, 0), (2, 1)]));

            let (w, c) = (&mut watches, &mut changes);
            note(w, c, 7, ReadFlags::MOVED_TO, Some(&name("hooks.json")));
            note(w, c, 7, ReadFlags::ATTRIB, None);
            note(w, c, -1, ReadFlags::QUEUE_OVERFLOW, None);
            assert_eq!(changes, HashMap::from([(1, 3), (2, 2)]));

            note(&mut watches, &mut changes, 7, ReadFlags::IGNORED, None);
            assert_eq!(changes[&1], 4, "the watch itself went");
            assert!(!watches.contains_key(&7) && watches.contains_key(&8));
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    //! No inotify: every load `stat`s every slot.
    use super::{Slot, Subscription};

    pub(super) fn subscribe(_: &[Slot], _: &dyn Fn()) -> Option<Subscription> {
        None
    }

    pub(super) fn refresh(_: &mut Subscription, _: &[Slot], _: &dyn Fn()) -> bool {
        false
    }

    pub(super) fn unsubscribe(_: &Subscription) {}
}
