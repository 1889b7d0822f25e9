#!/bin/sh
# beforeShellExecution and afterFileEdit: append every shell command and every edited
# file to an audit log ($AUDIT_LOG, default audit.log at the workspace root: .cursor is read-only to hooks). Fails open
# ("failClosed": false) so a full disk never blocks the agent.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
case "$(json_string hook_event_name)" in
  afterFileEdit) what="edit $(json_string file_path)" ;;
  *) what="shell $(json_string command)" ;;
esac
printf '%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(json_string conversation_id)" "$what" \
  >> "${AUDIT_LOG:-$(dirname "$0")/../../audit.log}"
