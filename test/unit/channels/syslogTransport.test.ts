// R-AUD-4: syslog messages reach a Unix stream socket with RFC 6587 octet
// counting, reconnect after the receiver went away, and go to UDP as one
// datagram each. (TCP and TLS are tested against real rsyslogd in
// test/integration/auditExport.test.ts.)
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSyslogTransport } from '../../../src/channels/auditSinks/syslogTransport.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Splits octet-counted frames. */
function frames(text: string): string[] {
  const out: string[] = [];
  let rest = Buffer.from(text, 'utf8');
  while (rest.length > 0) {
    const space = rest.indexOf(0x20);
    const length = Number(rest.subarray(0, space).toString());
    out.push(rest.subarray(space + 1, space + 1 + length).toString('utf8'));
    rest = rest.subarray(space + 1 + length);
  }
  return out;
}

function unixReceiver(path: string): Promise<{ server: Server; received: () => string; sockets: Socket[] }> {
  let text = '';
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  });
  return new Promise((resolve) => server.listen(path, () => resolve({ server, received: () => text, sockets })));
}

describe('R-AUD-4 syslog transports', () => {
  it('a Unix stream socket gets octet-counted frames, and a dropped connection is reopened for the next batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-unix-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'log.sock');
    const receiver = await unixReceiver(path);
    cleanups.push(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
    const transport = createSyslogTransport({ transport: 'unix', path });
    cleanups.push(() => transport.close());
    await transport.send(['<86>1 - h assent - ok - one', '<86>1 - h assent - ok - twö']);
    await expect.poll(() => frames(receiver.received()), { timeout: 2000 }).toEqual(['<86>1 - h assent - ok - one', '<86>1 - h assent - ok - twö']);
    for (const socket of receiver.sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await transport.send(['<86>1 - h assent - ok - three']);
    await expect.poll(() => frames(receiver.received()).at(-1), { timeout: 2000 }).toBe('<86>1 - h assent - ok - three');
  });

  it('a receiver that is not there is a rejected send, not a crash', async () => {
    const transport = createSyslogTransport({ transport: 'unix', path: join(tmpdir(), 'as-no-such-socket') });
    await expect(transport.send(['x'])).rejects.toThrow();
    await transport.close();
  });

  it('UDP sends one datagram per message', async () => {
    const socket = createSocket('udp4');
    const got: string[] = [];
    socket.on('message', (message) => got.push(message.toString('utf8')));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
    const transport = createSyslogTransport({ transport: 'udp', host: '127.0.0.1', port: socket.address().port });
    cleanups.push(() => transport.close());
    await transport.send(['<86>1 - h assent - ok - a', '<86>1 - h assent - ok - b']);
    await expect.poll(() => got, { timeout: 2000 }).toEqual(['<86>1 - h assent - ok - a', '<86>1 - h assent - ok - b']);
  });
});
