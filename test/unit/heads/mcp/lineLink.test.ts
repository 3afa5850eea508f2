// The gateway's own stdio framing (SPEC §10 design note) over in-memory
// streams: lines in with their original text, JSON.parse and a shape check
// only, the SDK's 10 MiB cap, and one write per event-loop turn.
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LineLink, MAX_LINE_BYTES } from '../../../../src/heads/mcp/lineLink.js';
import type { WireMessage } from '../../../../src/heads/mcp/wire.js';

/** A writable that records each write call, to count syscall-sized writes. */
class RecordingWritable extends Writable {
  readonly writes: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.writes.push(chunk.toString('utf8'));
    done();
  }
}

interface Harness {
  link: LineLink;
  input: PassThrough;
  output: RecordingWritable;
  received: { message: WireMessage; line: string | undefined }[];
  errors: Error[];
  closed: () => boolean;
}

const open: LineLink[] = [];
afterEach(async () => {
  for (const link of open.splice(0)) await link.close();
});

async function harness(options: { maxLineBytes?: number; closeOnEnd?: boolean; answerBatches?: boolean } = {}): Promise<Harness> {
  const input = new PassThrough();
  const output = new RecordingWritable();
  const link = new LineLink(input, output, { peer: 'the test peer', ...options });
  open.push(link);
  const received: Harness['received'] = [];
  const errors: Error[] = [];
  let closed = false;
  link.onmessage = (message, line) => received.push({ message, line });
  link.onerror = (error) => errors.push(error);
  link.onclose = () => {
    closed = true;
  };
  await link.start();
  return { link, input, output, received, errors, closed: () => closed };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LineLink reading', () => {
  it('R-MCP-1 splits lines across chunks and hands over each message with its exact original line', async () => {
    const h = await harness();
    const first = '{"jsonrpc":"2.0", "id":1,  "method":"tools/list"}';
    const second = '{ "result" : {"tools":[] , "x-vendor":{"k":1e2}}, "jsonrpc":"2.0","id":"a"}\r';
    h.input.write(first.slice(0, 10));
    h.input.write(`${first.slice(10)}\n${second.slice(0, 5)}`);
    h.input.write(`${second.slice(5)}\n`);
    await turn();
    expect(h.received.map((r) => r.line)).toEqual([first, second]);
    expect(h.received[1]?.message).toEqual({ jsonrpc: '2.0', id: 'a', result: { tools: [], 'x-vendor': { k: 100 } } });
  });

  it('R-MCP-2 validates no method schema: params and results it has never heard of pass as they are', async () => {
    const h = await harness();
    h.input.write('{"jsonrpc":"2.0","id":2,"method":"vendor/future","params":{"anything":[1,{"deep":true}],"_meta":{"x":"y"}}}\n');
    await turn();
    expect(h.received[0]?.message).toEqual({ jsonrpc: '2.0', id: 2, method: 'vendor/future', params: { anything: [1, { deep: true }], _meta: { x: 'y' } } });
    expect(h.errors).toEqual([]);
  });

  it('drops a line that is not JSON or not a JSON-RPC 2.0 message, says why, and reads the next line', async () => {
    const h = await harness();
    const bad = [
      'not json',
      '[1,2]',
      '{"jsonrpc":"1.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      '{"jsonrpc":"2.0","id":null,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
      '{"jsonrpc":"2.0","id":1,"result":[]}',
      '{"jsonrpc":"2.0","result":{}}',
      '{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}',
      '{"jsonrpc":"2.0","id":1}',
    ];
    h.input.write(`${bad.join('\n')}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n`);
    await turn();
    expect(h.received.map((r) => r.message)).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    expect(h.errors).toHaveLength(bad.length);
    expect(h.errors[0]?.message).toMatch(/the test peer sent a line that is not JSON; it was dropped/);
    expect(h.errors[2]?.message).toMatch(/not a JSON-RPC 2\.0 message \(its "jsonrpc" is not "2\.0"\)/);
    expect(h.closed()).toBe(false);
  });

  it('R-MCP-2 (hardening 19.9) on the client side each batch, empty or not, gets one -32600 error with id null; its members are never handed over', async () => {
    const h = await harness({ answerBatches: true });
    h.input.write('[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]\n[]\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await turn();
    await turn();
    expect(h.received.map((r) => r.message)).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    const answers = h.output.writes.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600, data: { type: 'invalid_request', details: { batchSize: 2 } } }) },
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600, data: { type: 'invalid_request', details: { batchSize: 0 } } }) },
    ]);
    expect(h.errors).toHaveLength(2);
  });

  it('reads a line that is not UTF-8 as the SDK did (U+FFFD) and never hands over its bytes as an original line', async () => {
    const h = await harness();
    h.input.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}}\n')]));
    await turn();
    expect(h.received).toHaveLength(1);
    expect(h.received[0]?.line).toBeUndefined();
    expect(h.received[0]?.message.params).toEqual({ data: 'a\ufffd\ufffdb' });
  });

  it('caps a line like the SDK (10 MiB by default): a longer one closes the link with frame_too_large', async () => {
    expect(MAX_LINE_BYTES).toBe(10 * 1024 * 1024);
    const h = await harness({ maxLineBytes: 64 });
    h.input.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(100)}"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`);
    await turn();
    expect(h.received).toEqual([]);
    expect(h.errors[0]).toMatchObject({ type: 'frame_too_large' });
    expect(h.closed()).toBe(true);
  });

  it('a handler that throws does not stop the stream: the error is reported and the next line is read', async () => {
    const h = await harness();
    let calls = 0;
    h.link.onmessage = () => {
      calls += 1;
      if (calls === 1) throw new Error('handler bug');
    };
    h.input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await turn();
    expect(calls).toBe(2);
    expect(h.errors.map((e) => e.message)).toEqual(['handler bug']);
  });

  it('R-MCP-1 with closeOnEnd, the end of the input closes the link once, after writing what was queued', async () => {
    const h = await harness({ closeOnEnd: true });
    h.link.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    h.input.end();
    await turn();
    expect(h.closed()).toBe(true);
    expect(h.output.writes.join('')).toBe('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n');
    expect(h.link.send({ jsonrpc: '2.0', method: 'ping', id: 1 })).toBe(false);
  });
});

describe('LineLink writing', () => {
  it('everything queued in one event-loop turn leaves in a single write, in order', async () => {
    const h = await harness();
    for (let id = 1; id <= 5; id++) h.link.send({ jsonrpc: '2.0', id, result: {} });
    expect(h.output.writes).toEqual([]);
    await turn();
    expect(h.output.writes).toEqual([[1, 2, 3, 4, 5].map((id) => `{"jsonrpc":"2.0","id":${id},"result":{}}`).join('\n') + '\n']);
    h.link.send({ jsonrpc: '2.0', id: 6, result: {} });
    await turn();
    expect(h.output.writes).toHaveLength(2);
  });

  it('R-MCP-2 a message given with its original line is written as that very text; one without is serialized', async () => {
    const h = await harness();
    const original = '{ "jsonrpc" : "2.0", "id" : 7, "result" : { "n" : 1e2 } }';
    h.link.send(JSON.parse(original) as WireMessage, original);
    h.link.send({ jsonrpc: '2.0', id: 8, result: { n: 100 } });
    await turn();
    expect(h.output.writes.join('')).toBe(`${original}\n{"jsonrpc":"2.0","id":8,"result":{"n":100}}\n`);
  });

  it('a write that fails later reaches every sender that asked to hear about it', async () => {
    const failing = new Writable({
      write(_chunk, _encoding, done) {
        done(new Error('EPIPE'));
      },
    });
    const link = new LineLink(new PassThrough(), failing, { peer: 'a dead peer' });
    open.push(link);
    const errors: Error[] = [];
    link.onerror = (error) => errors.push(error);
    await link.start();
    const failures: string[] = [];
    link.send({ jsonrpc: '2.0', id: 1, method: 'ping' }, undefined, (error) => failures.push(`1:${String(error)}`));
    link.send({ jsonrpc: '2.0', id: 2, method: 'ping' }, undefined, (error) => failures.push(`2:${String(error)}`));
    await turn();
    await turn();
    expect(failures).toEqual(['1:Error: EPIPE', '2:Error: EPIPE']);
    expect(errors.map((e) => e.message)).toContain('EPIPE');
  });
});
