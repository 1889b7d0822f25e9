//! Paths as the guard compares them, and the classes of paths its rules name.
//!
//! Every path is made absolute against the call's working directory, `.` and `..`
//! folded lexically, and the user's home written `~` (so `/home/dev/.ssh`, `~/.ssh`,
//! `$HOME/.ssh` and `../../.ssh` from `~/a/b` are all `~/.ssh`). A trailing `/*`,
//! `/.*` or `/**` means the directory's contents, which for a rule is the directory
//! itself (`rm -rf ~/*` empties the home directory).
//!
//! The classes (`@home`, `@secret`, …) are the guard's knowledge of what lives where
//! on the machine; rules select them by name, so the packs stay data.

/// The places a call is judged against.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The user's home, absolute, no trailing slash.
    pub home: String,
    /// The call's working directory, rendered (`~/proj`).
    pub cwd: String,
    /// `$COPSE_DIR`, rendered.
    pub copse_dir: String,
    /// The workspace roots, rendered.
    pub roots: Vec<String>,
}

impl Paths {
    /// The places for a home, a working directory, `$COPSE_DIR` and the workspace
    /// roots, all absolute.
    pub fn new(home: &str, cwd: &str, copse_dir: &str, roots: &[String]) -> Paths {
        let home = home.trim_end_matches('/').to_string();
        let home = if home.is_empty() {
            "/".to_string()
        } else {
            home
        };
        let mut p = Paths {
            home,
            cwd: String::new(),
            copse_dir: String::new(),
            roots: Vec::new(),
        };
        p.cwd = p.render(&fold(cwd));
        p.copse_dir = p.render(&fold(copse_dir));
        p.roots = roots.iter().map(|r| p.render(&fold(r))).collect();
        p
    }

    /// `abs` with the home written `~`.
    fn render(&self, abs: &str) -> String {
        if self.home != "/" {
            if abs == self.home {
                return "~".into();
            }
            if let Some(rest) = abs.strip_prefix(&self.home)
                && rest.starts_with('/')
            {
                return format!("~{rest}");
            }
        }
        abs.to_string()
    }

    /// A word as a path: absolute, folded, the home as `~`, contents globs dropped.
    pub fn normalize(&self, word: &str) -> String {
        let word = word.trim();
        if word.is_empty() {
            return String::new();
        }
        let absolute = if word == "~" || word.starts_with("~/") {
            format!("{}{}", self.home_abs(), &word[1..])
        } else if word.starts_with('/') {
            word.to_string()
        } else {
            format!("{}/{}", self.abs(&self.cwd), word)
        };
        let mut folded = fold(&absolute);
        for suffix in ["/*", "/.*", "/**", "/{*,.*}", "/.[!.]*", "/..?*"] {
            if let Some(dir) = folded.strip_suffix(suffix) {
                folded = if dir.is_empty() {
                    "/".into()
                } else {
                    dir.into()
                };
                break;
            }
        }
        if folded == "*" {
            folded = self.abs(&self.cwd);
        }
        self.render(&folded)
    }

    fn home_abs(&self) -> &str {
        if self.home == "/" { "" } else { &self.home }
    }

    /// A rendered path made absolute again.
    pub(crate) fn abs(&self, rendered: &str) -> String {
        if rendered == "~" {
            return self.home.clone();
        }
        match rendered.strip_prefix("~/") {
            Some(rest) => format!("{}/{rest}", self.home_abs()),
            None => rendered.to_string(),
        }
    }

    /// Whether the rendered `path` is `dir` or below it.
    fn within(path: &str, dir: &str) -> bool {
        path == dir
            || (path.len() > dir.len()
                && path.starts_with(dir)
                && (dir.ends_with('/') || path.as_bytes()[dir.len()] == b'/'))
    }

    /// The classes of a rendered path.
    pub fn classes(&self, path: &str) -> Classes {
        let mut c = Classes::default();
        if path.is_empty() {
            return c;
        }
        c.home = path == "~" || (self.home != "/" && path == self.home);
        c.root = path == "/";
        // The home directories of every user, and the directories the system runs
        // from, themselves (their contents are judged by the finer classes).
        c.system = SYSTEM_DIRS.contains(&path)
            || path.starts_with("/home/") && !path[6..].contains('/')
            || path.starts_with("/Users/") && !path[7..].contains('/')
            || SYSTEM_FILES.contains(&path);
        c.workspace = self
            .roots
            .iter()
            .any(|r| r == path || (Self::within(r, path) && path != "/"));
        c.vcs = self.roots.iter().any(|r| {
            let git = format!("{r}/.git");
            path == git
        });
        c.device = path.starts_with("/dev/")
            && !matches!(
                path,
                "/dev/null"
                    | "/dev/stdout"
                    | "/dev/stderr"
                    | "/dev/stdin"
                    | "/dev/tty"
                    | "/dev/zero"
                    | "/dev/random"
                    | "/dev/urandom"
            )
            && !path.starts_with("/dev/fd/")
            && !path.starts_with("/dev/tcp/")
            && !path.starts_with("/dev/udp/");
        // The key that tells copse's own hook processes apart is a secret too: with it
        // an agent could pass as a hook and switch hooks off.
        c.secret = is_secret(path)
            || (path.ends_with("/hook-key")
                && (Self::within(path, &self.copse_dir) || path.starts_with("~/.copse/")));
        let name = path.rsplit('/').next().unwrap_or(path);
        // Python runs these at every start.
        let python_startup = matches!(name, "usercustomize.py" | "sitecustomize.py")
            || name.ends_with(".pth")
                && (path.contains("site-packages")
                    || path.contains("$(")
                    || path.contains("dist-packages"));
        c.startup = python_startup
            || STARTUP.contains(&path)
            || path.starts_with("/etc/profile.d/")
            || path == "/etc/ld.so.preload";
        c.autostart = AUTOSTART
            .iter()
            .any(|d| Self::within(path, d) || path == *d)
            || path.starts_with("/var/spool/cron");
        c.git_hooks = path.contains("/.git/hooks/") || path.ends_with("/.git/hooks");
        c.git_config = path.ends_with("/.git/config")
            || path == "~/.gitconfig"
            || path.ends_with("/.git/config.worktree")
            || path == "~/.config/git/config";
        c.copse = Self::within(path, &self.copse_dir)
            || Self::within(path, "~/.copse")
            || Self::within(path, "/etc/copse-hooks")
            || self
                .roots
                .iter()
                .any(|r| Self::within(path, &format!("{r}/.copse")))
            || path.ends_with("/bin/copse-hooks");
        c.agent_config = AGENT_USER.iter().any(|a| Self::within(path, a))
            || AGENT_SYSTEM.iter().any(|a| Self::within(path, a))
            || self.roots.iter().any(|r| {
                AGENT_PROJECT
                    .iter()
                    .any(|a| Self::within(path, &format!("{r}/{a}")))
            });
        c.tmp = Self::within(path, "/tmp") || Self::within(path, "/var/tmp");
        c.inside_workspace = self
            .roots
            .iter()
            .any(|r| Self::within(path, r) && path != r);
        c
    }
}

/// What a path is, for the rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    pub home: bool,
    pub root: bool,
    pub system: bool,
    /// A workspace root itself, or a directory above one.
    pub workspace: bool,
    /// A workspace's `.git` directory itself.
    pub vcs: bool,
    pub device: bool,
    pub secret: bool,
    pub startup: bool,
    pub autostart: bool,
    pub git_hooks: bool,
    pub git_config: bool,
    pub copse: bool,
    pub agent_config: bool,
    pub tmp: bool,
    pub inside_workspace: bool,
}

impl Classes {
    /// Whether the path has the class a rule names (`home`, `secret`, …).
    pub fn has(&self, class: &str) -> Option<bool> {
        Some(match class {
            "home" => self.home,
            "root" => self.root,
            "system" => self.system,
            "workspace" => self.workspace,
            "vcs" => self.vcs,
            "device" => self.device,
            "secret" => self.secret,
            "startup" => self.startup,
            "autostart" => self.autostart,
            "git-hooks" => self.git_hooks,
            "git-config" => self.git_config,
            "copse" => self.copse,
            "agent-config" => self.agent_config,
            "tmp" => self.tmp,
            "inside-workspace" => self.inside_workspace,
            _ => return None,
        })
    }
}

/// Every class name a rule may use.
pub(crate) const CLASS_NAMES: &[&str] = &[
    "home",
    "root",
    "system",
    "workspace",
    "vcs",
    "device",
    "secret",
    "startup",
    "autostart",
    "git-hooks",
    "git-config",
    "copse",
    "agent-config",
    "tmp",
    "inside-workspace",
];

const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/usr/bin",
    "/usr/lib",
    "/usr/local",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/share",
    "/var",
    "/var/lib",
    "/var/log",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
    "/private",
    "/snap",
    "/nix",
    "/mnt",
    "/media",
];

const SYSTEM_FILES: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/sudoers",
    "/etc/fstab",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/ssh/sshd_config",
    "/boot/grub/grub.cfg",
];

/// Shell and session start-up files: what they hold runs in every new shell.
const STARTUP: &[&str] = &[
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.kshrc",
    "~/.mkshrc",
    "~/.config/fish/config.fish",
    "~/.inputrc",
    "~/.xprofile",
    "~/.xinitrc",
    "~/.xsession",
    "~/.pam_environment",
    "/etc/profile",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zshrc",
    "/etc/zsh/zshrc",
    "/etc/environment",
    "~/.ssh/rc",
    "~/.ssh/config",
    "~/.vimrc",
    "~/.gvimrc",
    "~/.config/nvim/init.vim",
    "~/.config/nvim/init.lua",
    "~/.emacs",
    "~/.emacs.d/init.el",
    "~/.tmux.conf",
    "~/.gitconfig",
    "~/.config/git/config",
    "~/.curlrc",
    "~/.wgetrc",
    "~/.ssh/authorized_keys",
    "~/.ssh/authorized_keys2",
    "~/.ssh/environment",
    "~/.npmrc",
    "~/.pythonrc",
    "~/.config/pip/pip.conf",
    "~/.pip/pip.conf",
];

/// Where schedulers, service managers and desktops start programs from.
const AUTOSTART: &[&str] = &[
    "~/.config/autostart",
    "~/.config/systemd/user",
    "~/.local/share/systemd/user",
    "~/Library/LaunchAgents",
    "/Library/LaunchAgents",
    "/Library/LaunchDaemons",
    "/etc/systemd/system",
    "/etc/systemd/user",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/etc/cron.d",
    "/etc/cron.daily",
    "/etc/cron.hourly",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/etc/crontab",
    "/etc/init.d",
    "/etc/rc.local",
    "/etc/xdg/autostart",
    "/etc/udev/rules.d",
    "/etc/anacrontab",
    "~/.config/fish/conf.d",
    "~/.bashrc.d",
    "~/.config/environment.d",
];

/// The agents' own user-level configuration and instruction files: what they run and
/// believe outside copse.
const AGENT_USER: &[&str] = &[
    "~/.claude/settings.json",
    "~/.claude/settings.local.json",
    "~/.claude/CLAUDE.md",
    "~/.claude/hooks",
    "~/.claude/plugins",
    "~/.claude.json",
    "~/.cursor/hooks.json",
    "~/.cursor/hooks",
    "~/.cursor/mcp.json",
    "~/.codex/config.toml",
    "~/.codex/hooks.json",
    "~/.codex/AGENTS.md",
    "~/.codex/requirements.toml",
    "~/.gemini/settings.json",
    "~/.gemini/GEMINI.md",
    "~/.gemini/extensions",
    "~/.copilot/hooks",
    "~/.copilot/config.json",
    "~/.config/github-copilot",
    "~/.qwen/settings.json",
    "~/.config/crush",
    "~/.config/opencode",
    "~/.config/kilo",
    "~/Documents/Cline/Hooks",
    "~/.factory/hooks.json",
];

const AGENT_SYSTEM: &[&str] = &[
    "/etc/claude-code",
    "/etc/codex",
    "/etc/cursor",
    "/etc/gemini-cli",
    "/etc/github-copilot",
    "/Library/Application Support/ClaudeCode",
];

/// The agents' project-level files, relative to a workspace root.
const AGENT_PROJECT: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks",
    ".cursor/hooks.json",
    ".cursor/hooks",
    ".cursor/mcp.json",
    ".cursorrules",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".gemini/.env",
    ".github/hooks",
    ".mcp.json",
    ".qwen/settings.json",
    "crush.json",
    ".crush.json",
    ".opencode",
    ".clinerules/hooks",
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
];

/// Credential stores and private keys.
fn is_secret(path: &str) -> bool {
    const DIRS: &[&str] = &[
        "~/.aws",
        "~/.azure",
        "~/.config/gcloud",
        "~/.kube",
        "~/.gnupg",
        "~/.password-store",
        "~/.docker/config.json",
        "~/.netrc",
        "~/.git-credentials",
        "~/.pypirc",
        "~/.gem/credentials",
        "~/.cargo/credentials",
        "~/.cargo/credentials.toml",
        "~/.config/gh/hosts.yml",
        "~/.config/hub",
        "~/.vault-token",
        "~/.terraform.d/credentials.tfrc.json",
        "~/.local/share/keyrings",
        "~/Library/Keychains",
        "~/.claude/.credentials.json",
        "~/.codex/auth.json",
        "~/.gemini/oauth_creds.json",
        "~/.config/github-copilot/apps.json",
        "~/.config/github-copilot/hosts.json",
        "~/.npmrc",
        "~/.yarnrc.yml",
        "~/.config/op",
        "~/.oci",
        "~/.config/doctl",
        "~/.config/heroku",
        "~/.netlify",
        "~/.config/netlify",
        "~/.vercel",
        "~/.fly",
        "~/.ssh",
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/ssh/ssh_host_rsa_key",
        "/etc/ssh/ssh_host_ed25519_key",
        "/etc/ssh/ssh_host_ecdsa_key",
        "/root/.ssh",
        "/var/run/secrets",
        "/run/secrets",
        "~/.mozilla/firefox",
        "~/.config/google-chrome",
        "~/.config/chromium",
        "~/Library/Application Support/Google/Chrome",
    ];
    // The harmless files of `~/.ssh`: public keys, the known hosts, the client config.
    if let Some(name) = path.strip_prefix("~/.ssh/") {
        return !(name.ends_with(".pub")
            || name == "known_hosts"
            || name == "known_hosts.old"
            || name == "config"
            || name.starts_with("config.d"));
    }
    if path.ends_with(".pub") {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    // Dotenv files hold the project's keys; their committed templates do not.
    if name == ".env"
        || name.starts_with(".env.")
            && !matches!(
                name,
                ".env.example" | ".env.sample" | ".env.template" | ".env.dist" | ".env.defaults"
            )
    {
        return true;
    }
    if path.starts_with("/proc/") && name == "environ" {
        return true;
    }
    DIRS.iter().any(|d| Paths::within(path, d))
        || path.rsplit('/').next().is_some_and(|name| {
            name.starts_with("id_rsa")
                || name.starts_with("id_ed25519")
                || name.starts_with("id_ecdsa")
                || name.starts_with("id_dsa")
        })
}

/// Lexically folds `.` and `..` and repeated slashes of an absolute path.
fn fold(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        "/".into()
    } else {
        format!("/{}", parts.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> Paths {
        Paths::new(
            "/home/dev",
            "/home/dev/proj",
            "/home/dev/.copse",
            &["/home/dev/proj".into()],
        )
    }

    #[test]
    fn every_spelling_of_a_path_is_one() {
        let p = p();
        for w in [
            "~/.ssh",
            "/home/dev/.ssh",
            "../.ssh",
            "./../.ssh/",
            "/home/dev//x/../.ssh",
        ] {
            assert_eq!(p.normalize(w), "~/.ssh", "{w}");
        }
        assert_eq!(p.normalize("~/*"), "~");
        assert_eq!(p.normalize("/*"), "/");
        assert_eq!(p.normalize("build"), "~/proj/build");
        assert_eq!(p.normalize("*"), "~/proj");
        assert_eq!(p.normalize(".."), "~");
    }

    #[test]
    fn classes() {
        let p = p();
        let c = |w: &str| p.classes(&p.normalize(w));
        assert!(c("~").home && c("/").root && c("/etc").system && c("/home/other").system);
        assert!(c(".").workspace && c("..").home && c(".git").vcs);
        assert!(c("~/.ssh/id_rsa").secret && c("~/.aws/credentials").secret);
        assert!(!c("~/.ssh/id_rsa.pub").secret && !c("~/.ssh/known_hosts").secret);
        assert!(c("~/.bashrc").startup && c("~/.config/systemd/user/x.service").autostart);
        assert!(c(".git/hooks/pre-commit").git_hooks && c(".copse/guard.toml").copse);
        assert!(c(".claude/settings.json").agent_config && c("~/.codex/hooks.json").agent_config);
        assert!(!c("build").workspace && c("build").inside_workspace && !c("src/main.rs").secret);
        assert!(c("/dev/sda").device && !c("/dev/null").device);
    }
}
