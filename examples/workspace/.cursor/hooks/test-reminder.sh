#!/bin/sh
# postToolUse (matcher Shell): after a failing test run, queue a reminder for the agent.
payload=$(cat)
case "$payload" in
  *"test result: FAILED"*|*"tests failed"*)
    printf '{"additional_context":"Tests failed: fix them before moving on, and do not skip them."}\n' ;;
esac
