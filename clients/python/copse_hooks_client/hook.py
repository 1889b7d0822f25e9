"""Write hooks in Python: typed payloads and responses, and ``run_hook``.

A hook is a function from the event's payload (the stdin object) to an answer::

    from copse_hooks_client.hook import Block, run_hook

    def guard(payload):
        command = payload.get("input", {}).get("command", "")
        if "rm -rf /" in command:
            return {"decision": "deny", "agentMessage": "Refusing to delete /."}
        return None  # no opinion

    run_hook(guard, events=["toolGate"])

The handler returns a response dict (printed as JSON), ``None`` (print nothing),
``Block(reason)`` (exit 2 with the reason on stderr) or ``Exit(code, stderr)``.

``run_hook`` works per call (stdin holds one payload; the answer is printed and the
process exits) and persistent (``--persistent`` among the arguments, or
``COPSE_HOOK_PERSISTENT=1``): it prints the hello line for ``events``, then answers
every ``{"id", "event", "payload"}`` line with ``{"id", "response"}`` or
``{"id", "exit", "stderr"}``, flushing each reply, until stdin closes. The same
handler serves both. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, TypedDict, Union

__all__ = [
    "Block",
    "Exit",
    "run_hook",
    "serve_per_call",
    "serve_persistent",
    "answer",
    "is_persistent",
    "HOOK_PROTOCOL",
    "PERSISTENT_FLAG",
    "PERSISTENT_ENV",
    "COPSE_EVENTS",
    "CopsePayload",
    "CopseResponse",
    "ModelInfo",
    "Edit",
    "QueueMessage",
    "HaltRun",
    "ClaudePayload",
    "ClaudeResponse",
    "CursorPayload",
    "CursorResponse",
    "GeminiPayload",
    "GeminiResponse",
    "CodexPayload",
    "CodexResponse",
    "CopilotPayload",
    "CopilotResponse",
]

#: The persistent-hook protocol version (the ``hello`` line's ``protocol``).
HOOK_PROTOCOL = 1
#: The argument that selects persistent mode.
PERSISTENT_FLAG = "--persistent"
#: The environment variable that selects persistent mode when it is ``1``.
PERSISTENT_ENV = "COPSE_HOOK_PERSISTENT"

#: Every Copse event a hook can be registered for.
COPSE_EVENTS = [
    "toolGate",
    "beforeSubmitPrompt",
    "afterFileEdit",
    "stop",
    "afterToolUse",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
    "afterAgentResponse",
    "afterAgentThought",
    "notification",
]


class ModelInfo(TypedDict, total=False):
    model: str
    model_id: str
    model_params: List[Dict[str, str]]


class Edit(TypedDict):
    old_string: str
    new_string: str


class CopsePayload(TypedDict, total=False):
    """The stdin of a Copse hook. ``hook_event_name`` says which event fields are set.

    Every event: ``hook_event_name``, ``conversation_id``, ``generation_id``,
    ``workspace_roots``, ``model`` (when known). A persistent hook serves every
    session of the engine: key per-session state on ``conversation_id``.
    """

    hook_event_name: str
    conversation_id: str
    generation_id: str
    workspace_roots: List[str]
    model: ModelInfo
    # toolGate, afterToolUse
    tool_name: str
    input: Dict[str, Any]
    file_content: str
    tool_call_id: str
    is_error: bool
    output: str
    duration: int
    # beforeSubmitPrompt
    prompt: str
    # afterFileEdit
    file_path: str
    edits: List[Edit]
    # stop, subagentStop
    status: str
    # subagentStart, subagentStop
    subagent_type: str
    subagent_model: str
    # sessionStart
    first_turn: bool
    session_id: str
    # sessionEnd
    reason: str
    duration_ms: int
    # preCompact
    trigger: str
    context_usage_percent: float
    context_tokens: int
    context_window_size: int
    message_count: int
    messages_to_compact: int
    is_first_compaction: bool
    # afterAgentResponse, afterAgentThought
    text: str
    # notification
    notification_type: str
    message: str
    title: str
    details: Any


class QueueMessage(TypedDict, total=False):
    text: str
    sendNow: bool


class HaltRun(TypedDict, total=False):
    reason: str


CopseResponse = TypedDict(
    "CopseResponse",
    {
        "decision": str,  # allow | ask | deny
        "agentMessage": str,
        "userMessage": str,
        "updatedInput": Dict[str, Any],
        "injectContext": str,
        "haltRun": HaltRun,
        "queueMessage": QueueMessage,
        "sessionEnv": Dict[str, str],
    },
    total=False,
)
CopseResponse.__doc__ = "What a Copse hook prints; every field optional."


# -- the vendor dialects (per-call hooks; only Copse entries can be persistent) ------


class ClaudePayload(TypedDict, total=False):
    """The stdin of a Claude Code hook; ``hook_event_name`` says which fields are set."""

    session_id: str
    transcript_path: str
    cwd: str
    hook_event_name: str
    prompt_id: str
    permission_mode: str
    tool_name: str
    tool_input: Any
    tool_use_id: str
    tool_response: Any
    duration_ms: int
    error: str
    is_interrupt: bool
    permission_suggestions: List[Any]
    message: str
    title: str
    notification_type: str
    prompt: str
    stop_hook_active: bool
    last_assistant_message: str
    agent_id: str
    agent_type: str
    agent_transcript_path: str
    trigger: str
    custom_instructions: str
    source: str
    model: str
    reason: str


#: What a Claude Code hook prints (``hookSpecificOutput`` carries the event's answer:
#: ``hookEventName``, ``permissionDecision``, ``permissionDecisionReason``,
#: ``updatedInput``, ``additionalContext``, or ``decision`` on PermissionRequest,
#: which may carry ``updatedPermissions`` with an allow).
ClaudeResponse = TypedDict(
    "ClaudeResponse",
    {
        "continue": bool,
        "stopReason": str,
        "suppressOutput": bool,
        "systemMessage": str,
        "decision": str,
        "reason": str,
        "hookSpecificOutput": Dict[str, Any],
    },
    total=False,
)


class CursorPayload(TypedDict, total=False):
    """The stdin of a Cursor hook; ``hook_event_name`` says which fields are set."""

    conversation_id: str
    generation_id: str
    hook_event_name: str
    cursor_version: str
    workspace_roots: List[str]
    user_email: str
    transcript_path: str
    model: str
    model_id: str
    model_params: List[Dict[str, str]]
    session_id: str
    is_background_agent: bool
    composer_mode: str
    reason: str
    duration_ms: int
    final_status: str
    tool_name: str
    tool_input: Any
    tool_use_id: str
    cwd: str
    agent_message: str
    duration: int
    tool_output: str
    error_message: str
    failure_type: str
    is_interrupt: bool
    subagent_id: str
    subagent_type: str
    task: str
    parent_conversation_id: str
    tool_call_id: str
    subagent_model: str
    is_parallel_worker: bool
    status: str
    description: str
    summary: str
    message_count: int
    tool_call_count: int
    loop_count: int
    modified_files: List[str]
    agent_transcript_path: str
    command: str
    url: str
    output: str
    result_json: str
    file_path: str
    content: str
    attachments: List[Any]
    edits: List[Any]
    prompt: str
    trigger: str
    context_usage_percent: float
    context_tokens: int
    context_window_size: int
    messages_to_compact: int
    is_first_compaction: bool
    text: str


CursorResponse = TypedDict(
    "CursorResponse",
    {
        "permission": str,  # allow | ask | deny
        "user_message": str,
        "agent_message": str,
        "updated_input": Dict[str, Any],
        "additional_context": str,
        "continue": bool,
        "followup_message": str,
        "env": Dict[str, str],
    },
    total=False,
)
CursorResponse.__doc__ = "What a Cursor hook prints; every field optional."


class GeminiPayload(TypedDict, total=False):
    """The stdin of a Gemini CLI hook; ``hook_event_name`` says which fields are set."""

    session_id: str
    transcript_path: str
    cwd: str
    hook_event_name: str
    timestamp: str
    tool_name: str
    tool_input: Any
    mcp_context: Dict[str, str]
    tool_response: Any
    prompt: str
    notification_type: str
    message: str
    details: Any
    prompt_response: str
    stop_hook_active: bool
    source: str
    reason: str
    trigger: str


#: What a Gemini CLI hook prints (``hookSpecificOutput``: ``hookEventName``,
#: ``additionalContext``, ``tool_input``).
GeminiResponse = TypedDict(
    "GeminiResponse",
    {
        "continue": bool,
        "stopReason": str,
        "suppressOutput": bool,
        "systemMessage": str,
        "decision": str,
        "reason": str,
        "hookSpecificOutput": Dict[str, Any],
    },
    total=False,
)


class CodexPayload(TypedDict, total=False):
    """The stdin of a Codex hook; ``hook_event_name`` says which fields are set."""

    session_id: str
    transcript_path: Optional[str]
    cwd: str
    hook_event_name: str
    model: str
    permission_mode: str
    source: str
    agent_type: str
    reason: str
    turn_id: str
    prompt: str
    tool_name: str
    tool_input: Any
    tool_response: Any
    tool_use_id: str
    trigger: str
    stop_hook_active: bool
    last_assistant_message: Optional[str]


#: What a Codex hook prints (``hookSpecificOutput``: ``hookEventName``,
#: ``permissionDecision``, ``permissionDecisionReason``, ``updatedInput``,
#: ``additionalContext``).
CodexResponse = TypedDict(
    "CodexResponse",
    {
        "continue": bool,
        "stopReason": str,
        "suppressOutput": bool,
        "systemMessage": str,
        "decision": str,
        "reason": str,
        "hookSpecificOutput": Dict[str, Any],
    },
    total=False,
)


class CopilotPayload(TypedDict, total=False):
    """The stdin of a GitHub Copilot CLI hook (camelCase; Copilot does not say which
    event it is for, so ``hook_event_name`` is only set where copse-hooks runs it)."""

    hook_event_name: str
    hookName: str
    sessionId: str
    transcriptPath: str
    timestamp: int
    cwd: str
    source: str
    reason: str
    prompt: str
    customInstructions: str
    trigger: str
    toolName: str
    toolArgs: Any
    toolInput: Any
    toolResult: Any
    error: Any
    permissionSuggestions: Any
    stopReason: str
    stop_hook_active: bool
    agentId: str
    agentName: str
    agentType: str
    response: str
    message: str
    title: str
    notification_type: str


#: What a Copilot hook prints: ``permissionDecision`` (``allow``/``deny``/``ask``) with
#: ``permissionDecisionReason`` and ``modifiedArgs`` on ``preToolUse``; ``behavior``
#: (``allow``/``deny``) with ``message`` and ``interrupt`` on ``permissionRequest``;
#: ``decision: "block"`` with ``reason`` on prompts and stops; ``additionalContext``.
CopilotResponse = TypedDict(
    "CopilotResponse",
    {
        "permissionDecision": str,
        "permissionDecisionReason": str,
        "modifiedArgs": Dict[str, Any],
        "behavior": str,
        "message": str,
        "interrupt": bool,
        "decision": str,
        "reason": str,
        "additionalContext": str,
    },
    total=False,
)


class Block:
    """Exit 2 with ``reason`` on stderr: blocks a gated event."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Block({self.reason!r})"


class Exit:
    """Exit with ``code`` and ``stderr`` (exit 1: the hook failed)."""

    def __init__(self, code: int, stderr: str = "") -> None:
        self.code = code
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"Exit({self.code!r}, {self.stderr!r})"


Answer = Union[None, Dict[str, Any], Block, Exit]
Handler = Callable[[Dict[str, Any]], Answer]


def is_persistent(argv: Optional[List[str]] = None, environ: Optional[Dict[str, str]] = None) -> bool:
    """Whether the hook runs persistent: ``--persistent`` or ``COPSE_HOOK_PERSISTENT=1``."""
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    return PERSISTENT_FLAG in argv or environ.get(PERSISTENT_ENV) == "1"


def _call(handler: Handler, payload: Any) -> Answer:
    if not isinstance(payload, dict):
        return Exit(1, "the hook's payload is not a JSON object")
    try:
        return handler(payload)
    except Exception as e:  # a failing handler is a failing hook, not a dead process
        return Exit(1, f"the hook failed: {type(e).__name__}: {e}")


def answer(request: Dict[str, Any], handler: Handler) -> Dict[str, Any]:
    """The reply line (as a dict) to one persistent request."""
    out = _call(handler, request.get("payload"))
    rid = request.get("id")
    if isinstance(out, Block):
        return {"id": rid, "exit": 2, "stderr": out.reason}
    if isinstance(out, Exit):
        return {"id": rid, "exit": out.code, "stderr": out.stderr}
    if out is not None and not isinstance(out, dict):
        return {"id": rid, "exit": 1, "stderr": f"the hook answered {type(out).__name__}, not a dict"}
    return {"id": rid, "response": out}


def _line(value: Any) -> bytes:
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def serve_per_call(handler: Handler, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]) -> int:
    """Answers the one payload on ``stdin``; returns the exit code."""
    try:
        payload = json.loads(stdin.read().decode("utf-8"))
    except ValueError as e:
        stderr.write(f"the hook could not read its payload: {e}".encode("utf-8"))
        return 1
    out = _call(handler, payload)
    if isinstance(out, Block):
        stderr.write(out.reason.encode("utf-8"))
        return 2
    if isinstance(out, Exit):
        stderr.write(out.stderr.encode("utf-8"))
        return out.code
    if out is not None:
        if not isinstance(out, dict):
            stderr.write(f"the hook answered {type(out).__name__}, not a dict".encode("utf-8"))
            return 1
        stdout.write(_line(out))
        stdout.flush()
    return 0


def serve_persistent(handler: Handler, events: Iterable[str], stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Says hello for ``events``, then answers every request line until ``stdin`` ends."""
    stdout.write(_line({"hello": {"protocol": HOOK_PROTOCOL, "events": list(events)}}))
    stdout.flush()
    while True:
        raw = stdin.readline()
        if not raw:
            return
        if not raw.strip():
            continue
        try:
            request = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            raise ValueError(f"not a persistent-hook request: {e}: {raw[:120]!r}") from e
        stdout.write(_line(answer(request, handler)))
        stdout.flush()


def run_hook(handler: Handler, events: Iterable[str] = ("toolGate",), persistent: Optional[bool] = None) -> None:
    """Runs ``handler`` as a hook, per call or persistent, and exits the process.

    ``events`` are the canonical event names a persistent hook asks for in its hello
    (ignored per call). ``persistent`` overrides the detection by ``is_persistent``.
    """
    if persistent is None:
        persistent = is_persistent()
    if persistent:
        try:
            serve_persistent(handler, events, sys.stdin.buffer, sys.stdout.buffer)
        except ValueError as e:
            sys.stderr.write(f"{e}\n")
            sys.exit(1)
        sys.exit(0)
    sys.exit(serve_per_call(handler, sys.stdin.buffer, sys.stdout.buffer, sys.stderr.buffer))
