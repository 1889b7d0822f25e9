"""A client for ``copse-hooks serve``: the copse-hooks engine over JSON-RPC 2.0.

Spawn a private server (``Client.spawn``) or connect to the per-user daemon
(``Client.connect``), open a session per conversation, and fire canonical events::

    with Client.spawn(["/path/to/workspace"], enabled=True) as client:
        session = client.open_session(conversation_id="conv-1")
        verdict = session.gate("run_shell", {"command": "git push --force"})
        if verdict["decision"] == "deny":
            print(verdict["agent_message"])

Standard library only. Requests may be issued from several threads at once; each
answer is matched to its request, whatever order the server completes them in.

To write a hook (per call or persistent) rather than host one, see
``copse_hooks_client.hook``.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import threading
from concurrent.futures import Future
from typing import IO, Any, Callable, Dict, List, Optional, TypedDict

__all__ = [
    "Client",
    "Session",
    "RpcError",
    "Verdict",
    "QueuedMessage",
    "PROTOCOL_VERSION",
    "CANCELLED",
]

PROTOCOL_VERSION = "2026-12-01"
#: The JSON-RPC error code of a cancelled request.
CANCELLED = -32800


class RunRecord(TypedDict, total=False):
    dialect: str
    event: str
    canonical_event: str
    command: str
    source: str
    scope: str
    outcome: str
    failure: Optional[str]
    failure_message: Optional[str]
    exit_code: Optional[int]
    parse_ok: bool
    sandbox: str
    sandbox_blocked: bool
    duration_ms: int
    agent_message: Optional[str]
    user_message: Optional[str]


class Verdict(TypedDict, total=False):
    """The answer to a blocking event: the fields of ``gate --json``."""

    detached: bool
    decision: str
    agent_message: Optional[str]
    user_message: Optional[str]
    updated_input: Optional[Dict[str, Any]]
    inject_context: Optional[str]
    halt: Optional[Dict[str, str]]
    runs: List[RunRecord]
    notices: List["Notice"]


class Notice(TypedDict, total=False):
    """Why hooks did or did not run, or what a failed run said (``kind`` is stable)."""

    kind: str
    message: str
    hint: Optional[str]
    source: Optional[str]


class QueuedMessage(TypedDict, total=False):
    """A message a hook queued (the ``queue/message`` notification)."""

    sessionId: str
    text: str
    send_now: bool
    held: bool
    epoch: int
    origin: Dict[str, Any]


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class Client:
    """One connection to a copse-hooks server."""

    def __init__(
        self,
        reader: IO[bytes],
        writer: IO[bytes],
        process: Optional[subprocess.Popen] = None,
        sock: Optional[socket.socket] = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._process = process
        self._sock = sock
        self._ids = itertools.count(1)
        self._pending: Dict[int, Future] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._listeners: List[Callable[[QueuedMessage], None]] = []
        self._closed = False
        self.server_info: Dict[str, Any] = {}
        self.capabilities: Dict[str, Any] = {}
        self._thread = threading.Thread(target=self._read_loop, name="copse-hooks-client", daemon=True)
        self._thread.start()

    # -- construction -------------------------------------------------------------

    @classmethod
    def spawn(
        cls,
        workspace_roots: List[str],
        *,
        binary: str = "copse-hooks",
        enabled: Optional[bool] = None,
        trusted: Optional[bool] = None,
        env: Optional[Dict[str, str]] = None,
        client_name: str = "copse-hooks-client-python",
    ) -> "Client":
        """Starts a private ``copse-hooks serve`` and initializes it."""
        process = subprocess.Popen(
            [binary, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None and process.stdin is not None
        client = cls(process.stdout, process.stdin, process=process)
        client.initialize(workspace_roots, enabled=enabled, trusted=trusted, client_name=client_name)
        return client

    @classmethod
    def connect(
        cls,
        workspace_roots: List[str],
        *,
        socket_path: Optional[str] = None,
        enabled: Optional[bool] = None,
        trusted: Optional[bool] = None,
        client_name: str = "copse-hooks-client-python",
    ) -> "Client":
        """Connects to a server on a Unix socket (default: the daemon at
        ``$COPSE_DIR/daemon.sock``) and initializes the connection."""
        if socket_path is None:
            copse_dir = os.environ.get("COPSE_DIR") or os.path.join(os.path.expanduser("~"), ".copse")
            socket_path = os.path.join(copse_dir, "daemon.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(socket_path)
        client = cls(sock.makefile("rb"), sock.makefile("wb"), sock=sock)
        client.initialize(workspace_roots, enabled=enabled, trusted=trusted, client_name=client_name)
        return client

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- protocol -----------------------------------------------------------------

    def _send(self, message: Dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            self._writer.write(line)
            self._writer.flush()

    def request_async(self, method: str, params: Optional[Dict[str, Any]] = None) -> "Future[Any]":
        """Sends a request; the future resolves with its result (or ``RpcError``).
        ``future.request_id`` names it for ``cancel``."""
        request_id = next(self._ids)
        future: Future = Future()
        future.request_id = request_id  # type: ignore[attr-defined]
        with self._lock:
            if self._closed:
                raise ConnectionError("the copse-hooks connection is closed")
            self._pending[request_id] = future
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        return future

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Sends a request and waits for its result."""
        return self.request_async(method, params).result(timeout)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def cancel(self, future: "Future[Any]") -> None:
        """Cancels an in-flight request: its hooks are killed and the future fails
        with ``RpcError`` code ``CANCELLED``."""
        self.notify("$/cancelRequest", {"id": future.request_id})  # type: ignore[attr-defined]

    def _read_loop(self) -> None:
        try:
            for line in self._reader:
                if not line.strip():
                    continue
                message = json.loads(line)
                if "id" in message and ("result" in message or "error" in message):
                    with self._lock:
                        future = self._pending.pop(message["id"], None)
                    if future is None:
                        continue
                    if "error" in message:
                        e = message["error"]
                        future.set_exception(RpcError(e.get("code", 0), e.get("message", ""), e.get("data")))
                    else:
                        future.set_result(message.get("result"))
                elif message.get("method") == "queue/message":
                    for listener in list(self._listeners):
                        listener(message.get("params", {}))
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._closed = True
                pending = list(self._pending.values())
                self._pending.clear()
            for future in pending:
                future.set_exception(ConnectionError("the copse-hooks server went away"))

    def initialize(
        self,
        workspace_roots: List[str],
        *,
        enabled: Optional[bool] = None,
        trusted: Optional[bool] = None,
        client_name: str = "copse-hooks-client-python",
    ) -> Dict[str, Any]:
        params: Dict[str, Any] = {
            "workspaceRoots": [os.path.abspath(r) for r in workspace_roots],
            "clientInfo": {"name": client_name, "version": "0.1.0"},
            "protocolVersion": PROTOCOL_VERSION,
        }
        if enabled is not None:
            params["enabled"] = enabled
        if trusted is not None:
            params["trusted"] = trusted
        result = self.request("initialize", params)
        self.server_info = result["serverInfo"]
        self.capabilities = result["capabilities"]
        return result

    # -- the API ------------------------------------------------------------------

    def open_session(
        self,
        conversation_id: Optional[str] = None,
        *,
        generation_id: Optional[str] = None,
        model: Optional[Dict[str, Any]] = None,
        host: Optional[Dict[str, Any]] = None,
    ) -> "Session":
        """``session/open``. ``host`` carries what only the host knows, camelCase:
        ``transcriptPath``, ``permissionMode``, ``hostVersion``, ``userEmail``,
        ``lastAssistantMessage``, ``agentId``, ``agentTranscriptPath``, ``remote``,
        ``loopCount``."""
        params: Dict[str, Any] = {}
        if conversation_id is not None:
            params["conversationId"] = conversation_id
        if generation_id is not None:
            params["generationId"] = generation_id
        if model is not None:
            params["model"] = model
        if host is not None:
            params["host"] = host
        return Session(self, self.request("session/open", params)["sessionId"])

    def on_queue_message(self, callback: Callable[[QueuedMessage], None]) -> Callable[[], None]:
        """Calls ``callback`` (on the reader thread) for every message a hook queues;
        returns a function that unsubscribes."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def list_hooks(self) -> Dict[str, Any]:
        return self.request("hooks/list")

    def test_hook(self, source: str, event: str, entry: int = 1, payload: Any = None) -> Dict[str, Any]:
        params: Dict[str, Any] = {"source": source, "event": event, "entry": entry}
        if payload is not None:
            params["payload"] = payload
        return self.request("hooks/test", params)

    def log(self, **filters: Any) -> Dict[str, Any]:
        """``spine/log``: ``event``, ``decision``, ``dialect``, ``failed``, ``since``,
        ``sessionId``, ``limit``."""
        return self.request("spine/log", filters)

    def show(self, run_id: str) -> Dict[str, Any]:
        return self.request("spine/show", {"runId": run_id})

    def doctor(self) -> Dict[str, Any]:
        return self.request("doctor")

    def close(self) -> None:
        """Shuts the server down (a spawned one exits) and closes the connection."""
        try:
            if not self._closed:
                self.request("shutdown", timeout=30)
                self.notify("exit")
        except (RpcError, OSError, ConnectionError):
            pass
        for stream in (self._writer,):
            try:
                stream.close()
            except OSError:
                pass
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        if self._process is not None:
            self._process.wait(timeout=30)
            if self._process.stdout is not None:
                self._process.stdout.close()

    # camelCase aliases, matching the TypeScript client and the protocol's names.
    openSession = open_session
    onQueueMessage = on_queue_message
    listHooks = list_hooks
    testHook = test_hook


class Session:
    """One conversation on a connection."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.id = session_id

    def fire_async(self, event: str, **fields: Any) -> "Future[Any]":
        """Fires a canonical event (``toolGate``, ``stop`` …) with its camelCase fields."""
        return self.client.request_async(f"hooks/{event}", {"sessionId": self.id, **fields})

    def fire(self, event: str, **fields: Any) -> Any:
        return self.fire_async(event, **fields).result()

    def gate_async(
        self,
        tool: str,
        tool_input: Dict[str, Any],
        file_content: Optional[str] = None,
        *,
        tool_use_id: Optional[str] = None,
    ) -> "Future[Verdict]":
        params: Dict[str, Any] = {"tool": tool, "input": tool_input}
        if file_content is not None:
            params["fileContent"] = file_content
        if tool_use_id is not None:
            params["toolUseId"] = tool_use_id
        return self.fire_async("toolGate", **params)

    def gate(
        self,
        tool: str,
        tool_input: Dict[str, Any],
        file_content: Optional[str] = None,
        *,
        tool_use_id: Optional[str] = None,
    ) -> Verdict:
        """Gates a tool call: ``decision`` is ``allow`` (no hook objects), ``ask`` or ``deny``.
        ``tool_use_id`` is the host's id for the call (generated when absent)."""
        return self.gate_async(tool, tool_input, file_content, tool_use_id=tool_use_id).result()

    def update(
        self,
        *,
        generation_id: Optional[str] = None,
        model: Optional[Dict[str, Any]] = None,
        host: Optional[Dict[str, Any]] = None,
    ) -> Dict[str, Any]:
        """``session/update``: only the fields given change (a new turn id, another
        model, a new permission mode …); the next event's hooks see them."""
        params: Dict[str, Any] = {"sessionId": self.id}
        if generation_id is not None:
            params["generationId"] = generation_id
        if model is not None:
            params["model"] = model
        if host is not None:
            params["host"] = host
        return self.client.request("session/update", params)

    def submit_prompt(self, prompt: str) -> Verdict:
        return self.fire("beforeSubmitPrompt", prompt=prompt)

    def after_tool_use(self, tool: str, tool_input: Dict[str, Any], output: str, **fields: Any) -> Dict[str, Any]:
        return self.fire("afterToolUse", tool=tool, input=tool_input, output=output, **fields)

    def after_file_edit(self, file_path: str, edits: Optional[List[Dict[str, str]]] = None) -> Verdict:
        return self.fire("afterFileEdit", filePath=file_path, edits=edits or [])

    def stop(self, status: str = "completed") -> Dict[str, Any]:
        return self.fire("stop", status=status)

    def drain(self) -> Dict[str, Any]:
        """``queue/drain``: ``messages`` to send now, ``pending`` held ones, ``remainingBudget``."""
        return self.client.request("queue/drain", {"sessionId": self.id})

    def close(self) -> None:
        self.client.request("session/close", {"sessionId": self.id})

    submitPrompt = submit_prompt
    afterToolUse = after_tool_use
    afterFileEdit = after_file_edit
