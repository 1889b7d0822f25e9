#!/bin/sh
# beforeShellExecution: deny commands that delete the filesystem root or the home
# directory, in any spelling: rm -rf /, /*, /., //, ~, ~/, ~/*, "$HOME", ${HOME}/,
# '/' (quoted), -r -f or --recursive --force, `sudo rm`, `/bin/rm`, `\rm`, with other
# arguments beside them or after `--`, and anywhere in a command list (a; b && c | d).
# Also deny piping a download straight into a shell.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
cmd=$(json_string command)

# Normalise: drop quotes, spell $HOME / ${HOME} as ~, and split command separators
# into their own words.
norm=$(printf '%s\n' "$cmd" | sed -e "s/[\"']//g" -e 's/\${HOME}/~/g' -e 's/\$HOME/~/g' \
  -e 's/[;&|()]/ ; /g')
if printf '%s\n' "$norm" | awk '
  {
    for (i = 1; i <= NF; i++) {
      if ($i !~ /^\\?([^ ]*\/)?rm$/) continue
      for (j = i + 1; j <= NF && $j != ";"; j++) {
        if ($j ~ /^-/) continue
        if ($j ~ /^(\/+|~\/*)(\*|\.)?\/*$/) found = 1
      }
    }
  }
  END { exit !found }'; then
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
