#!/bin/sh
# beforeReadFile: Cursor sends the file's content on stdin; deny reading anything
# that holds a private key, so it never reaches the model.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
if printf '%s' "$payload" | grep -Eq -- '-----BEGIN ([A-Z]+ )?PRIVATE KEY-----'; then
  respond deny "$(json_string file_path) contains a private key; it must not be read into the conversation." \
    "Blocked reading a file that holds a private key."
  exit 0
fi
printf '{"permission":"allow"}\n'
