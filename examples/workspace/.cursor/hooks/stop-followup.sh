#!/bin/sh
# stop: suggest a follow-up when the agent finished (held for the user; never auto-sent).
payload=$(cat)
. "$(dirname "$0")/lib.sh"
if [ "$(json_string status)" = completed ] && [ -n "$AUDIT_SESSION_STARTED" ]; then
  printf '{"followup_message":"Summarise what changed since %s and run the full test suite."}\n' "$AUDIT_SESSION_STARTED"
fi
