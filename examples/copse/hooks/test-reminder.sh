#!/bin/sh
# afterToolUse (matcher ^run_shell$, loop_limit 2): when a test run fails, queue a
# reminder for the agent. It is delivered before the agent's next step, at most twice
# per human turn (and never beyond the global budget of 5).
#
# Stdin is the Copse envelope plus tool_name, tool_call_id, is_error, input, output,
# duration.
payload=$(cat)

case "$payload" in
  *'"is_error":true'*) ;;
  *) exit 0 ;;
esac
case "$payload" in
  *'cargo test'* | *'cargo nextest'* | *'npm test'* | *'pytest'*)
    printf '%s\n' '{"queueMessage":{"text":"Tests failed: fix them before moving on, and do not skip or delete them.","sendNow":false}}'
    ;;
esac
exit 0
