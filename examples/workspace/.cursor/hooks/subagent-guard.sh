#!/bin/sh
# subagentStart: only read-only explorers may be spawned without review.
payload=$(cat)
. "$(dirname "$0")/lib.sh"
case "$(json_string subagent_type)" in
  explore) printf '{"permission":"allow"}\n' ;;
  *) printf '{"permission":"deny","user_message":"Only explore subagents are allowed in this workspace."}\n' ;;
esac
