// Types for copse-hooks-client/hook: writing hooks (per call and persistent).

import type { Readable, Writable } from "node:stream";

export declare const HOOK_PROTOCOL: 1;
export declare const PERSISTENT_FLAG: "--persistent";
export declare const PERSISTENT_ENV: "COPSE_HOOK_PERSISTENT";
export declare const COPSE_EVENTS: readonly CopseEventName[];

export type CopseEventName =
  | "toolGate"
  | "beforeSubmitPrompt"
  | "afterFileEdit"
  | "stop"
  | "afterToolUse"
  | "subagentStart"
  | "subagentStop"
  | "sessionStart"
  | "sessionEnd"
  | "preCompact"
  | "afterAgentResponse"
  | "afterAgentThought"
  | "notification";

/** The fields every Copse payload carries. A persistent hook serves every session of
 * the engine: key per-session state on `conversation_id`. */
export interface Envelope {
  conversation_id: string;
  generation_id: string;
  workspace_roots: string[];
  model?: { model: string; model_id: string; model_params: { id: string; value: string }[] };
}

export type CopsePayload = Envelope &
  (
    | { hook_event_name: "toolGate"; tool_name: string; input: Record<string, unknown>; file_content?: string }
    | { hook_event_name: "beforeSubmitPrompt"; prompt: string }
    | { hook_event_name: "afterFileEdit"; file_path: string; edits: { old_string: string; new_string: string }[] }
    | { hook_event_name: "stop"; status: string }
    | {
        hook_event_name: "afterToolUse";
        tool_name: string;
        tool_call_id: string;
        is_error: boolean;
        input: Record<string, unknown>;
        output: string;
        duration: number;
      }
    | { hook_event_name: "subagentStart"; subagent_type: string; subagent_model?: string }
    | { hook_event_name: "subagentStop"; subagent_type: string; status: string }
    | { hook_event_name: "sessionStart"; first_turn: boolean; session_id: string }
    | { hook_event_name: "sessionEnd"; reason: string; duration_ms: number }
    | {
        hook_event_name: "preCompact";
        trigger: string;
        context_usage_percent: number;
        context_tokens: number;
        context_window_size: number;
        message_count: number;
        messages_to_compact: number;
        is_first_compaction: boolean;
      }
    | { hook_event_name: "afterAgentResponse"; text: string }
    | { hook_event_name: "afterAgentThought"; text: string; duration_ms?: number }
    | { hook_event_name: "notification"; notification_type: string; message: string; title?: string; details: unknown }
  );

/** What a Copse hook prints; every field optional. */
export interface CopseResponse {
  decision?: "allow" | "ask" | "deny";
  agentMessage?: string;
  userMessage?: string;
  updatedInput?: Record<string, unknown>;
  injectContext?: string;
  haltRun?: { reason?: string };
  queueMessage?: { text: string; sendNow?: boolean };
  sessionEnv?: Record<string, string>;
}

/** Exit with a code and stderr (see `block`, `exit`). */
export interface ExitAnswer {
  readonly code: number;
  readonly stderr: string;
}

/** A response object (printed as JSON), `null`/`undefined` (print nothing), or an exit. */
export type HookAnswer<R = CopseResponse> = R | ExitAnswer | null | undefined;

export type Handler<P = CopsePayload, R = CopseResponse> = (payload: P) => HookAnswer<R> | Promise<HookAnswer<R>>;

export interface HookRequest {
  id: number;
  event: string;
  payload: unknown;
}

export type HookReply<R = CopseResponse> =
  | { id: number; response: R | null }
  | { id: number; exit: number; stderr: string };

/** Exit 2 with `reason` on stderr: blocks a gated event. */
export declare function block(reason: string): ExitAnswer;
/** Exit with `code` and `stderr` (exit 1: the hook failed). */
export declare function exit(code: number, stderr?: string): ExitAnswer;
/** `--persistent` among the arguments or COPSE_HOOK_PERSISTENT=1. */
export declare function isPersistent(argv?: string[], env?: NodeJS.ProcessEnv): boolean;
export declare function answer<P, R>(request: HookRequest, handler: Handler<P, R>): Promise<HookReply<R>>;
export declare function servePerCall<P, R>(
  handler: Handler<P, R>,
  input: string,
  stdout: { write(s: string): unknown },
  stderr: { write(s: string): unknown },
): Promise<number>;
export declare function servePersistent<P, R>(
  handler: Handler<P, R>,
  events: readonly string[],
  input: Readable,
  output: Writable,
): Promise<void>;
/** Runs `handler` as a hook, per call or persistent, and sets `process.exitCode`. */
export declare function runHook<P = CopsePayload, R = CopseResponse>(
  handler: Handler<P, R>,
  options?: { events?: readonly string[]; persistent?: boolean },
): Promise<void>;
