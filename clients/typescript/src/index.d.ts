// Types for copse-hooks-client. The wire shapes are published as JSON Schemas in
// the copse-hooks repository (schemas/rpc/, schemas/output/).

import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";

export declare const PROTOCOL_VERSION: string;
export declare const CANCELLED: -32800;

export declare class RpcError extends Error {
  readonly code: number;
  readonly rpcMessage: string;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown);
}

export interface InitializeOptions {
  workspaceRoots: string[];
  /** Trust these roots for this connection (default: the user's settings). */
  trusted?: boolean;
  /** Turn external hooks on or off for this connection (default: the settings). */
  enabled?: boolean;
  clientName?: string;
}

export interface SpawnOptions extends InitializeOptions {
  /** The copse-hooks binary (default: `copse-hooks` on PATH). */
  binary?: string;
  env?: NodeJS.ProcessEnv;
}

export interface ConnectOptions extends InitializeOptions {
  /** Default: `$COPSE_DIR/daemon.sock`. */
  socketPath?: string;
}

export interface SessionIdentity {
  conversationId?: string;
  generationId?: string;
  model?: { model: string; model_id?: string; model_params?: { id: string; value: string }[] };
  host?: HostFields;
}

/** What only the host knows; each is sent to the dialects whose vendor defines it. */
export interface HostFields {
  transcriptPath?: string;
  permissionMode?: string;
  hostVersion?: string;
  userEmail?: string;
  lastAssistantMessage?: string;
  agentId?: string;
  agentTranscriptPath?: string;
  remote?: boolean;
  loopCount?: number;
}

export interface RunRecord {
  dialect: string;
  event: string;
  canonical_event: string;
  command: string;
  source: string;
  scope: "user" | "project";
  outcome: "allow" | "ask" | "deny" | "none" | "failed";
  failure: string | null;
  failure_message: string | null;
  exit_code: number | null;
  parse_ok: boolean;
  sandbox: string;
  sandbox_blocked: boolean;
  duration_ms: number;
  agent_message: string | null;
  user_message: string | null;
}

/** The answer to a blocking event: the fields of `gate --json`. */
export interface Verdict {
  detached: false;
  decision: "allow" | "ask" | "deny";
  agent_message: string | null;
  user_message: string | null;
  updated_input: Record<string, unknown> | null;
  inject_context: string | null;
  halt: { reason: string } | null;
  runs: RunRecord[];
  /** Why hooks did or did not run, and what each failed run said. */
  notices: Notice[];
}

/** A notice: `kind` is stable (`hooks_off`, `workspace_untrusted`, `hook_failed`, ...). */
export interface Notice {
  kind: string;
  message: string;
  hint: string | null;
  source: string | null;
}

/** The answer to an observation event, given at once. */
export interface Detached {
  detached: true;
  dispatched: number;
  dropped: number;
}

export interface QueuedMessage {
  sessionId?: string;
  text: string;
  send_now: boolean;
  held: boolean;
  epoch: number;
  origin: { dialect: string; event: string; command: string; source: string; entry: number };
}

export interface Drained {
  messages: QueuedMessage[];
  pending: QueuedMessage[];
  remainingBudget: number;
}

export type Pending<T> = Promise<T> & { requestId: number };

export declare class Client {
  readonly process?: ChildProcess;
  readonly socket?: Socket;
  serverInfo?: { name: string; version: string };
  capabilities?: { methods: string[]; events: string[]; blockingEvents: string[]; cancellation: boolean; maxLineBytes: number };
  constructor(readable: Readable, writable: Writable, owner?: { process?: ChildProcess; socket?: Socket });
  static spawn(options: SpawnOptions): Promise<Client>;
  static connect(options: ConnectOptions): Promise<Client>;
  request<T = any>(method: string, params?: object): Pending<T>;
  notify(method: string, params?: object): void;
  cancel(request: Pending<unknown>): void;
  initialize(options: InitializeOptions): Promise<any>;
  openSession(identity?: SessionIdentity): Promise<Session>;
  onQueueMessage(listener: (message: QueuedMessage) => void): () => void;
  listHooks(): Pending<any>;
  testHook(source: string, event: string, options?: { entry?: number; payload?: unknown }): Pending<any>;
  log(filters?: Record<string, unknown>): Pending<{ version: number; runs: any[] }>;
  show(runId: string): Pending<any>;
  doctor(): Pending<any>;
  close(): Promise<void>;
}

export declare class Session {
  readonly client: Client;
  readonly id: string;
  fire<T = Verdict | Detached>(event: string, fields?: Record<string, unknown>): Pending<T>;
  gate(tool: string, input: Record<string, unknown>, options?: { fileContent?: string; toolUseId?: string }): Pending<Verdict>;
  submitPrompt(prompt: string): Pending<Verdict>;
  afterToolUse(tool: string, input: Record<string, unknown>, output: string, fields?: Record<string, unknown>): Pending<Detached>;
  afterFileEdit(filePath: string, edits?: { oldString: string; newString: string }[]): Pending<Verdict>;
  stop(status?: string): Pending<Detached>;
  drain(): Pending<Drained>;
  update(changes: { generationId?: string; model?: SessionIdentity["model"]; host?: HostFields }): Pending<{ updated: true }>;
  close(): Pending<{ closed: true }>;
}
