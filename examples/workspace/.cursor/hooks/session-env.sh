#!/bin/sh
# sessionStart: export variables every later hook of this session sees.
cat >/dev/null
printf '{"env":{"AUDIT_SESSION_STARTED":"%s"}}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
