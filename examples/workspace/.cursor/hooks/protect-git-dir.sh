#!/bin/sh
# preToolUse (matcher Delete|Write): never let the agent write or delete inside .git/.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
# Cursor sends the file as tool_input.file_path (absolute); older payloads as path.
path=$(json_string file_path)
[ -n "$path" ] || path=$(json_string path)
case "$path" in
  .git/*|*/.git/*)
    respond deny "Writing or deleting inside .git/ corrupts the repository; use git commands instead." \
      "Blocked a direct change to $path."
    ;;
esac
