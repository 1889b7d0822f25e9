//! A hook process's host pid, for tests that check from the host what a hook left
//! running. A hook has a `/proc` of its own (issue 22): `/proc/self/stat` inside it names
//! its pid in its own pid namespace, which means nothing to the host. So a hook records
//! [`SELF_ID_SH`] (its pid namespace, its pid there and its start time) and the test finds
//! the host pid with [`host_pid`], while the process lives; once it is gone, nothing
//! matches (its namespace goes with it, and the start time tells a later namespace that
//! reused the number apart).

/// Shell (a double-quoted word) that prints the current shell's identity for
/// [`host_pid`]: `pid:[<namespace inode>] <pid in it> <start time>`.
pub const SELF_ID_SH: &str = r#""$(readlink /proc/$$/ns/pid) $$ $(cut -d" " -f22 /proc/$$/stat)""#;

/// The host pid of the live (not zombie) process `line` describes, as [`SELF_ID_SH`]
/// printed it; `None` when no such process runs (any more).
pub fn host_pid(line: &str) -> Option<i32> {
    let mut fields = line.split_whitespace();
    let (ns, inner, start) = (fields.next()?, fields.next()?, fields.next()?);
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if !std::fs::read_link(format!("/proc/{pid}/ns/pid")).is_ok_and(|l| l.as_os_str() == ns) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the comm (which may hold spaces): state is field 3, start time field 22.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let rest: Vec<&str> = rest.split_whitespace().collect();
        if rest
            .first()
            .is_some_and(|s| s.starts_with('Z') || s.starts_with('X'))
            || rest.get(19) != Some(&start)
        {
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let innermost = status
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))
            .and_then(|ids| ids.split_whitespace().last());
        if innermost == Some(inner) {
            return Some(pid);
        }
    }
    None
}
