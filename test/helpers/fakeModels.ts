// Scripted fake model servers for the agent CLIs' wire formats (Claude
// Messages SSE, OpenAI Responses SSE, Gemini streamGenerateContent SSE, and
// OpenAI Chat Completions SSE for OpenCode, Kilo, Copilot CLI and Qwen Code), on
// 127.0.0.1 port 0. Each turn request gets the next step of a script; every
// request body is recorded so a test can read what the CLI sent back.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Which wire a fake model speaks: Claude Code, Codex, Gemini CLI, and the Chat Completions CLIs respectively. */
export type ModelWire = 'anthropic' | 'openai' | 'gemini' | 'chat';

/** Every wire a fake model of the harness speaks: the four above, and Augment's tenant API for Auggie (fakeAugment.ts). */
export type AnyModelWire = ModelWire | 'augment';

/** A model turn that calls one tool. `namespace` is the Responses API namespace Codex offers MCP tools in (`mcp__<server>`). */
export interface ToolCallStep {
  tool: string;
  input: Record<string, unknown>;
  namespace?: string;
}

/** A model turn that answers text, which ends the agent's turn. */
export interface TextStep {
  text: string;
}

export type ModelStep = ToolCallStep | TextStep;

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  /**
   * `turn`: a conversation turn, answered with a script step. `side`: a helper call
   * (Gemini's router, token counting, a tool-less Claude call), answered without
   * using a step. `unknown`: nothing here serves it; it got a 404.
   */
  kind: 'turn' | 'side' | 'unknown';
}

/** A tool result as the CLI sent it back to the model (Claude `tool_result`, Codex `function_call_output`, Gemini `functionResponse`). */
export interface ToolResult {
  callId: string;
  /** The tool's name, where the wire says it or the matching call does. */
  name: string | undefined;
  output: string;
  isError: boolean;
}

export interface FakeModel {
  readonly wire: AnyModelWire;
  readonly port: number;
  /** `http://127.0.0.1:PORT`, without the API path (each CLI adds its own). */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** The turn requests only. */
  turns(): RecordedRequest[];
  /** The tool results carried by the latest turn request (its history holds every earlier one too). */
  toolResults(): ToolResult[];
  close(): Promise<void>;
}

/** What a turn gets once the script is used up. */
export const SCRIPT_FINISHED_TEXT = 'fake model: script finished';

const MAX_BODY_BYTES = 32 * 1024 * 1024;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asObjects = (value: unknown): Json[] => asArray(value).filter(isObject);

/** The step for a conversation that already holds `modelTurns` model turns: stateless, so a retried request gets the same step. */
function stepAt(script: readonly ModelStep[], modelTurns: number): ModelStep {
  return script[modelTurns] ?? { text: SCRIPT_FINISHED_TEXT };
}

function sse(res: ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

// --- Claude Messages API -----------------------------------------------------

function anthropicMessage(id: string, model: unknown, step: ModelStep): Json {
  const content = 'tool' in step ? [{ type: 'tool_use', id: `toolu_${id}`, name: step.tool, input: step.input }] : [{ type: 'text', text: step.text }];
  return {
    id: `msg_${id}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: 'tool' in step ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function anthropicEvents(id: string, model: unknown, step: ModelStep): { event: string; data: Json }[] {
  const event = (type: string, data: Json): { event: string; data: Json } => ({ event: type, data: { type, ...data } });
  const block =
    'tool' in step
      ? [
          event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${id}`, name: step.tool, input: {} } }),
          event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.input) } }),
        ]
      : [
          event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: step.text } }),
        ];
  return [
    event('message_start', { message: { ...anthropicMessage(id, model, step), content: [], stop_reason: null } }),
    ...block,
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'tool' in step ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }),
    event('message_stop', {}),
  ];
}

function serveAnthropic(script: readonly ModelStep[], path: string, body: Json, res: ServerResponse, id: string): RecordedRequest['kind'] {
  if (path.startsWith('/v1/messages/count_tokens')) {
    json(res, 200, { input_tokens: 1 });
    return 'side';
  }
  if (!path.startsWith('/v1/messages')) return 'unknown';
  const isTurn = asArray(body['tools']).length > 0;
  const step = isTurn ? stepAt(script, asObjects(body['messages']).filter((m) => m['role'] === 'assistant').length) : { text: 'ok' };
  if (body['stream'] === true) sse(res, anthropicEvents(id, body['model'], step));
  else json(res, 200, anthropicMessage(id, body['model'], step));
  return isTurn ? 'turn' : 'side';
}

function anthropicToolResults(body: Json): ToolResult[] {
  const messages = asObjects(body['messages']);
  const names = new Map<string, string>();
  for (const m of messages) for (const block of asObjects(m['content'])) if (block['type'] === 'tool_use') names.set(String(block['id']), String(block['name']));
  const results: ToolResult[] = [];
  for (const m of messages) {
    for (const block of asObjects(m['content'])) {
      if (block['type'] !== 'tool_result') continue;
      const content = block['content'];
      const output = typeof content === 'string' ? content : asObjects(content).map((c) => (typeof c['text'] === 'string' ? c['text'] : JSON.stringify(c))).join('\n');
      const callId = String(block['tool_use_id']);
      results.push({ callId, name: names.get(callId), output, isError: block['is_error'] === true });
    }
  }
  return results;
}

// --- OpenAI Responses API ----------------------------------------------------

function serveOpenAi(script: readonly ModelStep[], path: string, body: Json, res: ServerResponse, id: string): RecordedRequest['kind'] {
  if (!path.startsWith('/v1/responses')) return 'unknown';
  const input = asObjects(body['input']);
  const modelTurns = input.filter((item) => item['type'] === 'function_call' || (item['type'] === 'message' && item['role'] === 'assistant')).length;
  const step = stepAt(script, modelTurns);
  const item =
    'tool' in step
      ? { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: step.tool, ...(step.namespace === undefined ? {} : { namespace: step.namespace }), arguments: JSON.stringify(step.input) }
      : { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] };
  const response = { id: `resp_${id}`, object: 'response', status: 'completed', model: body['model'] };
  const usage = { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 };
  const event = (type: string, data: Json): { event: string; data: Json } => ({ event: type, data: { type, ...data } });
  sse(res, [
    event('response.created', { response: { ...response, status: 'in_progress' } }),
    event('response.output_item.added', { output_index: 0, item }),
    event('response.output_item.done', { output_index: 0, item }),
    event('response.completed', { response: { ...response, output: [item], usage } }),
  ]);
  return 'turn';
}

function openAiToolResults(body: Json): ToolResult[] {
  const input = asObjects(body['input']);
  const names = new Map<string, string>();
  for (const item of input) if (item['type'] === 'function_call') names.set(String(item['call_id']), String(item['name']));
  return input
    .filter((item) => item['type'] === 'function_call_output')
    .map((item) => {
      const output = item['output'];
      const text = typeof output === 'string' ? output : asObjects(output).map((c) => (typeof c['text'] === 'string' ? c['text'] : JSON.stringify(c))).join('\n');
      const callId = String(item['call_id']);
      return { callId, name: names.get(callId), output: text, isError: false };
    });
}

// --- Gemini generateContent --------------------------------------------------

/** A value that satisfies a JSON schema the way a terse model would: first enum value, minimum number, every property. */
function sampleForSchema(schema: unknown): unknown {
  if (!isObject(schema)) return 'ok';
  const enumValues = asArray(schema['enum']);
  if (enumValues.length > 0) return enumValues[0];
  const type = String(schema['type'] ?? (isObject(schema['properties']) ? 'object' : 'string')).toLowerCase();
  switch (type) {
    case 'object': {
      const properties = isObject(schema['properties']) ? schema['properties'] : {};
      return Object.fromEntries(Object.entries(properties).map(([key, sub]) => [key, sampleForSchema(sub)]));
    }
    case 'array':
      return [];
    case 'number':
    case 'integer': {
      const minimum = typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
      return typeof schema['maximum'] === 'number' ? Math.min(Math.max(minimum, 1), schema['maximum']) : Math.max(minimum, 1);
    }
    case 'boolean':
      return false;
    default:
      return 'ok';
  }
}

function geminiCandidate(parts: Json[]): Json {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } };
}

function serveGemini(script: readonly ModelStep[], path: string, body: Json, res: ServerResponse): RecordedRequest['kind'] {
  const method = /^\/v1beta\/models\/[^/:]+:(\w+)/.exec(path)?.[1];
  if (method === 'countTokens') {
    json(res, 200, { totalTokens: 1 });
    return 'side';
  }
  if (method === 'generateContent') {
    // A side call with a response schema (the model router, next-speaker checks): schema-valid JSON.
    const config = isObject(body['generationConfig']) ? body['generationConfig'] : {};
    const schema = config['responseJsonSchema'] ?? config['responseSchema'];
    json(res, 200, geminiCandidate([{ text: schema === undefined ? 'ok' : JSON.stringify(sampleForSchema(schema)) }]));
    return 'side';
  }
  if (method !== 'streamGenerateContent') return 'unknown';
  const step = stepAt(script, asObjects(body['contents']).filter((c) => c['role'] === 'model').length);
  const parts = 'tool' in step ? [{ functionCall: { name: step.tool, args: step.input } }] : [{ text: step.text }];
  sse(res, [{ data: geminiCandidate(parts) }]);
  return 'turn';
}

function geminiToolResults(body: Json): ToolResult[] {
  const results: ToolResult[] = [];
  for (const content of asObjects(body['contents'])) {
    for (const part of asObjects(content['parts'])) {
      const fr = part['functionResponse'];
      if (!isObject(fr)) continue;
      const response = isObject(fr['response']) ? fr['response'] : {};
      const value = response['error'] ?? response['output'] ?? response;
      results.push({ callId: String(fr['id'] ?? ''), name: typeof fr['name'] === 'string' ? fr['name'] : undefined, output: typeof value === 'string' ? value : JSON.stringify(value), isError: 'error' in response });
    }
  }
  return results;
}

// --- OpenAI Chat Completions -------------------------------------------------

/** Whether a Chat Completions message list is the subagent conversation of a script (its first user message carries the marker). */
function chatTurnScript(script: readonly ModelStep[], messages: Json[], subagents: Readonly<Record<string, readonly ModelStep[]>>): readonly ModelStep[] {
  const firstUser = messages.find((m) => m['role'] === 'user');
  const text = typeof firstUser?.['content'] === 'string' ? firstUser['content'] : JSON.stringify(firstUser?.['content'] ?? '');
  for (const [marker, steps] of Object.entries(subagents)) if (text.includes(marker)) return steps;
  return script;
}

function serveChat(script: readonly ModelStep[], path: string, body: Json, res: ServerResponse, id: string, subagents: Readonly<Record<string, readonly ModelStep[]>>): RecordedRequest['kind'] {
  if (!path.startsWith('/v1/chat/completions') && !path.startsWith('/chat/completions')) return 'unknown';
  const messages = asObjects(body['messages']);
  // A call without tools (a title, a memory pass) is a side call: plain text, no step used.
  const isTurn = asArray(body['tools']).length > 0;
  const step = isTurn ? stepAt(chatTurnScript(script, messages, subagents), messages.filter((m) => m['role'] === 'assistant').length) : { text: 'ok' };
  const base = { id: `chatcmpl-${id}`, created: 1_700_000_000, model: body['model'] ?? 'fake-model' };
  const toolCall = 'tool' in step ? { id: `call_${id}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.input) } } : undefined;
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (body['stream'] !== true) {
    const message = toolCall === undefined ? { role: 'assistant', content: 'text' in step ? step.text : '' } : { role: 'assistant', content: null, tool_calls: [toolCall] };
    json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: toolCall === undefined ? 'stop' : 'tool_calls' }], usage });
    return isTurn ? 'turn' : 'side';
  }
  const chunk = (delta: Json, finish: string | null, extra: Json = {}): { data: Json } => ({ data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra } });
  const events =
    toolCall === undefined
      ? [chunk({ role: 'assistant', content: '' }, null), chunk({ content: 'text' in step ? step.text : '' }, null), chunk({}, 'stop', { usage })]
      : [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall }] }, null), chunk({}, 'tool_calls', { usage })];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`data: ${JSON.stringify(event.data)}\n\n`);
  res.end('data: [DONE]\n\n');
  return isTurn ? 'turn' : 'side';
}

function chatToolResults(body: Json): ToolResult[] {
  const messages = asObjects(body['messages']);
  const names = new Map<string, string>();
  for (const m of messages) for (const call of asObjects(m['tool_calls'])) names.set(String(call['id']), String((call['function'] as Json | undefined)?.['name']));
  return messages
    .filter((m) => m['role'] === 'tool')
    .map((m) => {
      const content = m['content'];
      const output = typeof content === 'string' ? content : asObjects(content).map((c) => (typeof c['text'] === 'string' ? c['text'] : JSON.stringify(c))).join('\n');
      const callId = String(m['tool_call_id']);
      return { callId, name: names.get(callId), output, isError: false };
    });
}

// --- Server ------------------------------------------------------------------

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

export interface FakeModelOptions {
  /** Awaited before each request is answered: a test may hold the model's next turn until something else happened. */
  beforeReply?: (request: RecordedRequest) => Promise<void>;
  /**
   * Chat wire: conversations whose first user message contains a key play that
   * key's script instead (a subagent's conversation, started with the prompt the
   * main script gave it).
   */
  subagents?: Readonly<Record<string, readonly ModelStep[]>>;
}

/**
 * Starts a fake model for `wire` on 127.0.0.1 (port 0) that plays `script`: the
 * n-th model turn of a conversation (counted from the history the CLI sends)
 * gets `script[n]`, so a retried request gets the same answer.
 */
export async function startFakeModel(wire: ModelWire, script: readonly ModelStep[], options: FakeModelOptions = {}): Promise<FakeModel> {
  const subagents = options.subagents ?? {};
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
      const fields = isObject(body) ? body : {};
      try {
        if (req.method === 'POST') {
          if (wire === 'anthropic') record.kind = serveAnthropic(script, path, fields, res, id);
          else if (wire === 'openai') record.kind = serveOpenAi(script, path, fields, res, id);
          else if (wire === 'chat') record.kind = serveChat(script, path, fields, res, id, subagents);
          else record.kind = serveGemini(script, path, fields, res);
        }
        if (record.kind === 'unknown') json(res, 404, { error: { message: `fake ${wire} model does not serve ${req.method ?? ''} ${path}` } });
      } catch (error) {
        if (!res.headersSent) json(res, 500, { error: { message: String(error) } });
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
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    wire,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    turns,
    toolResults() {
      const last = turns().at(-1);
      if (last === undefined || !isObject(last.body)) return [];
      if (wire === 'anthropic') return anthropicToolResults(last.body);
      if (wire === 'openai') return openAiToolResults(last.body);
      if (wire === 'chat') return chatToolResults(last.body);
      return geminiToolResults(last.body);
    },
    close,
  };
}
