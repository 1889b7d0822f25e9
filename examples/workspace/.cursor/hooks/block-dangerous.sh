#!/bin/sh
# beforeShellExecution: deny commands that wipe the filesystem root or pipe a
# download straight into a shell.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
cmd=$(json_string command)

if printf '%s' "$cmd" | grep -Eq '(^|[;&|[:space:]])rm[[:space:]]+(-[[:alnum:]-]+[[:space:]]+)*(/|/\*|~|\$HOME)([[:space:]]|$)'; then
  respond deny "Refusing to run '$cmd': it deletes the filesystem root or home directory." \
    "Blocked a command that would delete / or ~."
  exit 0
fi
if printf '%s' "$cmd" | grep -Eq '(curl|wget)[^|]*\|[[:space:]]*(sudo[[:space:]]+)?(ba|z|da)?sh\b'; then
  respond deny "Piping a download into a shell runs unreviewed remote code. Download the script, show it to the user, and run it only if they agree." \
    "Blocked curl | sh."
  exit 0
fi
# No objection: print nothing.
