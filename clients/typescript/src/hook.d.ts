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

// -- The vendor dialects (per-call hooks; only Copse entries can be persistent). Event-
// specific fields are optional: `hook_event_name` says which are present.

export interface ClaudePayload {
  session_id: string;
  transcript_path: string;
  cwd: string;
  hook_event_name: string;
  prompt_id?: string;
  permission_mode?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  tool_response?: unknown;
  duration_ms?: number;
  error?: string;
  is_interrupt?: boolean;
  permission_suggestions?: unknown[];
  message?: string;
  title?: string;
  notification_type?: string;
  prompt?: string;
  stop_hook_active?: boolean;
  last_assistant_message?: string;
  agent_id?: string;
  agent_type?: string;
  agent_transcript_path?: string;
  trigger?: string;
  custom_instructions?: string;
  source?: string;
  model?: string;
  reason?: string;
}

export interface ClaudeResponse {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: string;
  reason?: string;
  hookSpecificOutput?: {
    hookEventName: string;
    permissionDecision?: "allow" | "deny" | "ask" | "defer";
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
    decision?: {
      behavior: "allow" | "deny";
      updatedInput?: Record<string, unknown>;
      updatedPermissions?: Record<string, unknown>[];
      message?: string;
      interrupt?: boolean;
    };
  };
}

export interface CursorPayload {
  conversation_id: string;
  generation_id: string;
  hook_event_name: string;
  workspace_roots: string[];
  cursor_version?: string;
  user_email?: string;
  transcript_path?: string;
  model?: string;
  model_id?: string;
  model_params?: { id: string; value: string }[];
  session_id?: string;
  is_background_agent?: boolean;
  composer_mode?: string;
  reason?: string;
  duration_ms?: number;
  final_status?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  cwd?: string;
  agent_message?: string;
  duration?: number;
  tool_output?: string;
  error_message?: string;
  failure_type?: string;
  is_interrupt?: boolean;
  subagent_id?: string;
  subagent_type?: string;
  task?: string;
  parent_conversation_id?: string;
  tool_call_id?: string;
  subagent_model?: string;
  is_parallel_worker?: boolean;
  status?: string;
  description?: string;
  summary?: string;
  message_count?: number;
  tool_call_count?: number;
  loop_count?: number;
  modified_files?: string[];
  agent_transcript_path?: string;
  command?: string;
  url?: string;
  output?: string;
  result_json?: string;
  file_path?: string;
  content?: string;
  attachments?: unknown[];
  edits?: unknown[];
  prompt?: string;
  trigger?: string;
  context_usage_percent?: number;
  context_tokens?: number;
  context_window_size?: number;
  messages_to_compact?: number;
  is_first_compaction?: boolean;
  text?: string;
}

export interface CursorResponse {
  permission?: "allow" | "ask" | "deny";
  user_message?: string;
  agent_message?: string;
  updated_input?: Record<string, unknown>;
  additional_context?: string;
  continue?: boolean;
  followup_message?: string;
  env?: Record<string, string>;
}

export interface GeminiPayload {
  session_id: string;
  transcript_path: string;
  cwd: string;
  hook_event_name: string;
  timestamp: string;
  tool_name?: string;
  tool_input?: unknown;
  mcp_context?: { server_name: string; tool_name: string };
  tool_response?: unknown;
  prompt?: string;
  notification_type?: string;
  message?: string;
  details?: unknown;
  prompt_response?: string;
  stop_hook_active?: boolean;
  source?: string;
  reason?: string;
  trigger?: string;
}

export interface GeminiResponse {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: "allow" | "approve" | "deny" | "block" | "ask";
  reason?: string;
  hookSpecificOutput?: { hookEventName?: string; additionalContext?: string; tool_input?: unknown };
}

export interface CodexPayload {
  session_id: string;
  transcript_path: string | null;
  cwd: string;
  hook_event_name: string;
  model?: string;
  permission_mode?: string;
  source?: string;
  agent_type?: string;
  reason?: string;
  turn_id?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_response?: unknown;
  tool_use_id?: string;
  trigger?: string;
  stop_hook_active?: boolean;
  last_assistant_message?: string | null;
}

export interface CodexResponse {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: "approve" | "block";
  reason?: string;
  hookSpecificOutput?: {
    hookEventName: string;
    permissionDecision?: "allow" | "deny" | "ask";
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}

/** The stdin of a GitHub Copilot CLI hook (camelCase; Copilot does not say which event
 * it is for, so `hook_event_name` is only set where copse-hooks runs it). */
export interface CopilotPayload {
  hook_event_name?: string;
  hookName?: string;
  sessionId?: string;
  transcriptPath?: string;
  timestamp?: number;
  cwd?: string;
  source?: string;
  reason?: string;
  prompt?: string;
  customInstructions?: string;
  trigger?: string;
  toolName?: string;
  toolArgs?: unknown;
  toolInput?: unknown;
  toolResult?: unknown;
  error?: unknown;
  permissionSuggestions?: unknown;
  stopReason?: string;
  stop_hook_active?: boolean;
  agentId?: string;
  agentName?: string;
  agentType?: string;
  response?: string;
  message?: string;
  title?: string;
  notification_type?: string;
}

/** What a Copilot hook prints: `permissionDecision` with its reason and `modifiedArgs` on
 * `preToolUse`; `behavior` with `message` and `interrupt` on `permissionRequest`;
 * `decision: "block"` with `reason` on prompts and stops; `additionalContext`. */
export interface CopilotResponse {
  permissionDecision?: "allow" | "deny" | "ask";
  permissionDecisionReason?: string;
  modifiedArgs?: Record<string, unknown>;
  behavior?: "allow" | "deny";
  message?: string;
  interrupt?: boolean;
  decision?: "block";
  reason?: string;
  additionalContext?: string;
}
