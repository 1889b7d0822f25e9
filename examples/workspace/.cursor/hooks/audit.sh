#!/bin/sh
# beforeShellExecution: append every shell command to an audit log. Fails open
# ("failClosed": false) so a full disk never blocks the agent.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
cmd=$(json_string command)
printf '%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(json_string conversation_id)" "$cmd" \
  >> "$(dirname "$0")/audit.log"
