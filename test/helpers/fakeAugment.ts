// A scripted fake Augment tenant for Auggie (@augmentcode/auggie) on
// 127.0.0.1, port 0: Auggie reaches it through AUGMENT_SESSION_AUTH's
// `tenantURL`. It answers the calls Auggie 0.36.0 makes at start
// (`/get-models`, whose `feature_flags.enable_hooks` is what switches Auggie's
// hooks on, the MCP settings and remote-tool lists, the indexing's
// `/find-missing`, answered so that no file is uploaded) and plays a script on
// `/chat-stream`, Augment's model stream: one JSON object a line (NDJSON), a
// tool call as a `type: 5` node `{tool_use: {tool_use_id, tool_name,
// input_json}}`, text as a `type: 0` node, and a last line with `stop_reason`
// (3: a tool use was requested, 1: end of turn). The n-th model turn of a
// conversation — `chat_history.length`, each entry one earlier exchange — gets
// step n, so a retried request gets the same answer. Every request is recorded.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SCRIPT_FINISHED_TEXT, type FakeModel, type ModelStep, type RecordedRequest, type ToolResult } from './fakeModels.js';

export interface FakeAugmentOptions {
  /**
   * What `/get-models` says of `feature_flags.enable_hooks` (default true);
   * `'absent'` leaves the key out, as a tenant without hooks may.
   */
  enableHooks?: boolean | 'absent';
  /** Awaited before each request is answered: a test may hold the model's next turn until something else happened. */
  beforeReply?: (request: RecordedRequest) => Promise<void>;
}

/** Augment's chat node types that the fake writes and reads (Auggie 0.36.0). */
const NODE = { text: 0, toolResult: 1, toolUse: 5 } as const;
/** Augment's stop reasons: END_TURN, TOOL_USE_REQUESTED. */
const STOP = { endTurn: 1, toolUse: 3 } as const;

const MAX_BODY_BYTES = 32 * 1024 * 1024;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const asObjects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The `/get-models` answer: one model (Auggie sends `model: ""`, the default), and the feature flags. */
function modelsAnswer(enableHooks: boolean | 'absent'): Json {
  return {
    default_model: 'fake-model',
    models: [{ name: 'fake-model', suggested_prefix_char_count: 0, suggested_suffix_char_count: 0 }],
    languages: [],
    feature_flags: enableHooks === 'absent' ? {} : { enable_hooks: enableHooks },
  };
}

/** Streams one script step as Auggie reads `/chat-stream`. */
function serveChatStream(script: readonly ModelStep[], body: Json, res: ServerResponse, id: string): void {
  const turn = Array.isArray(body['chat_history']) ? body['chat_history'].length : 0;
  const step = script[turn] ?? { text: SCRIPT_FINISHED_TEXT };
  res.writeHead(200, { 'content-type': 'application/json' });
  if ('tool' in step) {
    const node = { id: 1, type: NODE.toolUse, content: '', tool_use: { tool_use_id: `toolu_${id}`, tool_name: step.tool, input_json: JSON.stringify(step.input) } };
    res.write(`${JSON.stringify({ text: '', nodes: [node] })}\n`);
    res.end(`${JSON.stringify({ text: '', nodes: [], stop_reason: STOP.toolUse })}\n`);
  } else {
    res.write(`${JSON.stringify({ text: step.text, nodes: [{ id: 1, type: NODE.text, content: step.text }] })}\n`);
    res.end(`${JSON.stringify({ text: '', nodes: [], stop_reason: STOP.endTurn })}\n`);
  }
}

/** The answers to what Auggie asks at start besides the model list; undefined when the path is none of them. */
function sideAnswer(path: string): Json | undefined {
  if (path === '/settings/get-mcp-tenant-configs' || path === '/settings/get-mcp-user-configs') return { configs: [] };
  if (path === '/agents/list-remote-tools') return { tools: [] };
  // Workspace indexing asks which blobs (by their hash names) the tenant lacks: none, so Auggie uploads no file.
  if (path === '/find-missing') return { unknown_memory_names: [], nonindexed_blob_names: [] };
  // Auggie reports its own errors and events here; recorded, answered empty.
  if (path === '/report-error' || path === '/record-user-events' || path === '/record-request-events' || path === '/client-metrics') return {};
  return undefined;
}

/**
 * Every tool result a `/chat-stream` request carries, oldest first: those of
 * earlier exchanges (`chat_history[].request_nodes`) and the new ones
 * (`nodes`). Names come from the tool-use nodes of the history.
 */
export function augmentToolResults(body: Json): ToolResult[] {
  const history = asObjects(body['chat_history']);
  const names = new Map<string, string>();
  for (const entry of history) {
    for (const node of asObjects(entry['response_nodes'])) {
      const use = node['tool_use'];
      if (isObject(use)) names.set(String(use['tool_use_id']), String(use['tool_name']));
    }
  }
  const nodes = [...history.flatMap((entry) => asObjects(entry['request_nodes'])), ...asObjects(body['nodes'])];
  return nodes
    .map((node) => node['tool_result_node'])
    .filter(isObject)
    .map((result) => {
      const callId = String(result['tool_use_id']);
      return { callId, name: names.get(callId), output: typeof result['content'] === 'string' ? result['content'] : JSON.stringify(result['content']), isError: result['is_error'] === true };
    });
}

/** The input of the tool call `callId` in a `/chat-stream` request's history, parsed. */
export function augmentToolInput(body: Json, callId: string): Record<string, unknown> | undefined {
  for (const entry of asObjects(body['chat_history'])) {
    for (const node of asObjects(entry['response_nodes'])) {
      const use = node['tool_use'];
      if (isObject(use) && use['tool_use_id'] === callId && typeof use['input_json'] === 'string') return JSON.parse(use['input_json']) as Record<string, unknown>;
    }
  }
  return undefined;
}

/** How many model turns a `/chat-stream` request already holds: the index of the step it gets; undefined for any other request. */
export function augmentStepIndex(request: RecordedRequest): number | undefined {
  if (request.path !== '/chat-stream' || !isObject(request.body)) return undefined;
  const history = request.body['chat_history'];
  return Array.isArray(history) ? history.length : 0;
}

/**
 * Starts a fake Augment tenant that plays `script` (steps as for
 * startFakeModel). Its `baseUrl` is the `tenantURL` (Auggie adds the paths).
 */
export async function startFakeAugment(script: readonly ModelStep[], options: FakeAugmentOptions = {}): Promise<FakeModel> {
  const enableHooks = options.enableHooks ?? true;
  const requests: RecordedRequest[] = [];
  let served = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      let text: string;
      try {
        text = await readBody(req);
      } catch {
        json(res, 413, { error: 'request body too large' });
        return;
      }
      let body: unknown = text;
      try {
        body = text === '' ? {} : JSON.parse(text);
      } catch {
        // Recorded as text.
      }
      const record: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, kind: 'unknown' };
      requests.push(record);
      if (options.beforeReply !== undefined) await options.beforeReply(record);
      const id = String(++served);
      try {
        if (req.method === 'POST' && path === '/chat-stream') {
          record.kind = 'turn';
          serveChatStream(script, isObject(body) ? body : {}, res, id);
          return;
        }
        if (req.method === 'POST' && path === '/get-models') {
          record.kind = 'side';
          json(res, 200, modelsAnswer(enableHooks));
          return;
        }
        const side = req.method === 'POST' ? sideAnswer(path) : undefined;
        if (side !== undefined) {
          record.kind = 'side';
          json(res, 200, side);
          return;
        }
        json(res, 404, { error: `fake Augment tenant does not serve ${req.method ?? ''} ${path}` });
      } catch (error) {
        if (!res.headersSent) json(res, 500, { error: String(error) });
        else res.end();
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const turns = (): RecordedRequest[] => requests.filter((r) => r.kind === 'turn');
  return {
    wire: 'augment',
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    turns,
    toolResults() {
      const last = turns().at(-1);
      return last === undefined || !isObject(last.body) ? [] : augmentToolResults(last.body);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
