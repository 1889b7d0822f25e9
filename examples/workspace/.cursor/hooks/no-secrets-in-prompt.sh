#!/bin/sh
# beforeSubmitPrompt: refuse prompts that paste an API key or password.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
prompt=$(json_string prompt)
if printf '%s' "$prompt" | grep -Eiq '(sk-[a-z0-9_-]{16,}|password[[:space:]]*[:=])'; then
  printf '{"continue":false,"user_message":"Your prompt looks like it contains a secret; it was not sent."}\n'
  exit 0
fi
printf '{"continue":true}\n'
