#!/bin/sh
# toolGate (matcher ^run_shell$): deny destructive shell commands, ask before a force push.
#
# Stdin is the Copse envelope plus {"tool_name":"run_shell","input":{"command":"…"}}.
# Printing nothing means "no opinion"; the answer uses the canonical vocabulary:
# decision (allow | ask | deny), agentMessage (for the model), userMessage (for you).
payload=$(cat)

answer() {
  # answer DECISION AGENT_MESSAGE USER_MESSAGE (messages must not contain " or \)
  printf '{"decision":"%s","agentMessage":"%s","userMessage":"%s"}\n' "$1" "$2" "$3"
}

case "$payload" in
  *'"command":"rm -rf /"'* | *'"command":"rm -rf / '* | *'rm -rf ~'* | *'rm -rf $HOME'*)
    answer deny "Refusing to delete the root or home directory." \
      "Blocked a recursive delete of / or your home directory."
    ;;
  *'curl '*'| sh'* | *'curl '*'| bash'* | *'wget '*'| sh'* | *'wget '*'| bash'*)
    answer deny "Piping a download into a shell runs unreviewed code; download it, show it, then ask." \
      "Blocked piping a download into a shell."
    ;;
  *'git push --force'* | *'git push -f'*)
    answer ask "A force push rewrites the remote branch; the user must confirm it." \
      "This command force-pushes. Confirm to continue."
    ;;
esac
exit 0
