# Shared helpers for the example hooks (POSIX sh, no jq needed).

# json_string FIELD: prints the first JSON string value of FIELD from $payload,
# with \" and \\ unescaped. Good enough for the flat payloads Cursor sends.
json_string() {
  printf '%s' "$payload" | sed -n "s/.*\"$1\":\"\(\([^\"\\\\]\|\\\\.\)*\)\".*/\1/p" | head -n 1 |
    sed 's/\\"/"/g; s/\\\\/\\/g'
}

# respond PERMISSION AGENT_MESSAGE USER_MESSAGE
respond() {
  esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
  printf '{"permission":"%s","agent_message":"%s","user_message":"%s"}\n' \
    "$1" "$(esc "$2")" "$(esc "$3")"
}
