#!/bin/sh
# beforeShellExecution (matcher ^git push): ask the user before a force push.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
cmd=$(json_string command)
case "$cmd" in
  *--force*|*" -f"*|*"+"*)
    respond ask "A force push rewrites the remote branch; the user must confirm it." \
      "This command force-pushes. Confirm to continue."
    ;;
  *) printf '{"permission":"allow"}\n' ;;
esac
