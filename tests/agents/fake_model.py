#!/usr/bin/env python3
"""A fake model server on 127.0.0.1 for running real agents offline.

It answers in three vendors' API formats:
  * Anthropic Messages (POST /v1/messages, SSE when "stream": true) for Claude Code
    and for GitHub Copilot CLI (its BYOK provider type "anthropic"),
  * Gemini (POST /v1beta/models/<model>:streamGenerateContent?alt=sse, and
    :generateContent) for Gemini CLI,
  * the OpenAI Responses API (POST /v1/responses, SSE) for Codex.

On a turn whose latest user text contains "RUN: <command>" and that has no tool result
yet, it asks for that one shell command with the agent's own shell tool; otherwise it
answers "mock final answer". "TOOL: <name> <json arguments> END" asks for any other tool
the agent offers, and "MODEL-ERROR-PLEASE" gets an HTTP 400 (Anthropic format only; used
to record GitHub Copilot CLI's hook payloads, see record_copilot.py). Every request body
is appended to the JSONL file named by --log, so a test can tell what the model received
(or that it received nothing).

Standard library only. Usage: fake_model.py --port-file FILE --log FILE
"""

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FINAL = "mock final answer"
MODEL_ERROR = "MODEL-ERROR-PLEASE"
RUN_RE = re.compile(r"RUN: (.+?)(?:\s*END|$)", re.S)
TOOL_RE = re.compile(r"TOOL: (\w+) (\{.*\}) END", re.S)
LOCK = threading.Lock()
COUNTER = [0]


def next_id():
    with LOCK:
        COUNTER[0] += 1
        return COUNTER[0]


def find_command(texts):
    """The command asked for in the latest text that has one."""
    for text in reversed(texts):
        m = RUN_RE.search(text)
        if m:
            return m.group(1).strip()
    return None


def find_tool_call(texts, tools):
    """("name", {args}) from the latest "TOOL: name {json args} END" whose tool is offered."""
    for text in reversed(texts):
        m = TOOL_RE.search(text)
        if m and m.group(1) in tools:
            try:
                return m.group(1), json.loads(m.group(2))
            except ValueError:
                return None
    return None


def all_strings(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            all_strings(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            all_strings(v, out)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, *args):
        pass

    def record(self, body):
        with LOCK:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\n")

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        chunks = []
        for name, obj in events:
            prefix = f"event: {name}\n" if name else ""
            chunks.append(f"{prefix}data: {json.dumps(obj)}\n\n")
        data = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_json({})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}
        self.record(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            return self.send_json({"input_tokens": 10})
        if path.endswith("/messages"):
            return self.anthropic(body)
        if ":streamGenerateContent" in path or ":generateContent" in path:
            return self.gemini(body, stream=":streamGenerateContent" in path)
        if ":countTokens" in path:
            return self.send_json({"totalTokens": 10})
        if path.endswith("/responses"):
            return self.openai(body)
        self.send_json({"error": {"message": f"fake model: no route {path}"}}, 404)

    # --- Anthropic Messages -------------------------------------------------
    def anthropic(self, body):
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        last = users[-1] if users else {}
        content = last.get("content")
        blocks = content if isinstance(content, list) else []
        has_result = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
        tools = [t.get("name") for t in body.get("tools") or []]
        texts = all_strings(content, [])
        if any(MODEL_ERROR in t for t in texts):
            return self.send_json({"type": "error", "error": {"type": "invalid_request_error",
                                                              "message": "fake model: asked to fail"}}, 400)
        # Claude Code's shell tool is "Bash"; GitHub Copilot CLI's (provider type
        # anthropic) is "bash", with the same two required arguments.
        shell = next((name for name in ("Bash", "bash") if name in tools), None)
        command = None if has_result or shell is None else find_command(texts)
        call = None if has_result else find_tool_call(texts, tools)
        n = next_id()
        if command:
            block = {"type": "tool_use", "id": f"toolu_mock_{n}", "name": shell,
                     "input": {"command": command, "description": "mock command"}}
            stop = "tool_use"
        elif call:
            block = {"type": "tool_use", "id": f"toolu_mock_{n}", "name": call[0], "input": call[1]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": FINAL}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {"id": f"msg_mock_{n}", "type": "message", "role": "assistant",
                   "model": body.get("model", "mock"), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            message.update(content=[block], stop_reason=stop)
            return self.send_json(message)
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": FINAL}
        self.send_sse([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # --- Gemini -----------------------------------------------------------
    def gemini(self, body, stream):
        contents = body.get("contents") or []
        last = contents[-1] if contents else {}
        parts = last.get("parts") or []
        has_result = any("functionResponse" in p for p in parts if isinstance(p, dict))
        texts = [p.get("text", "") for p in parts if isinstance(p, dict)]
        tools = []
        for t in body.get("tools") or []:
            tools += [d.get("name") for d in t.get("functionDeclarations") or []]
        command = None
        if not has_result and "run_shell_command" in tools:
            command = find_command(texts)
        if command:
            part = {"functionCall": {"name": "run_shell_command",
                                     "args": {"command": command, "description": "mock command"}}}
        else:
            part = {"text": FINAL}
        response = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                      "totalTokenCount": 15},
                    "modelVersion": "gemini-2.5-flash"}
        if stream:
            return self.send_sse([(None, response)])
        self.send_json(response)

    # --- OpenAI Responses -------------------------------------------------
    def openai(self, body):
        items = body.get("input") or []
        has_result = False
        texts = []
        for item in items:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                has_result = True
            elif item.get("type") == "message" and item.get("role") == "user":
                has_result = False
                texts = all_strings(item.get("content"), [])
        tools = {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}
        command = None if has_result else find_command(texts)
        n = next_id()
        rid = f"resp_mock_{n}"
        if command and "shell_command" in tools:
            item = {"type": "function_call", "id": f"fc_mock_{n}", "call_id": f"call_mock_{n}",
                    "name": "shell_command", "arguments": json.dumps({"command": command})}
        elif command and "exec_command" in tools:
            item = {"type": "function_call", "id": f"fc_mock_{n}", "call_id": f"call_mock_{n}",
                    "name": "exec_command", "arguments": json.dumps({"cmd": command})}
        elif command and "shell" in tools:
            item = {"type": "function_call", "id": f"fc_mock_{n}", "call_id": f"call_mock_{n}",
                    "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", command]})}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_mock_{n}",
                    "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                 "output_tokens_details": None, "total_tokens": 15}
        self.send_sse([
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                           "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": rid, "usage": usage}}),
        ])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
