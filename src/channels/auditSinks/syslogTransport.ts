// Carrying RFC 5424 messages to a syslog receiver: UDP (one datagram each), TCP
// and TLS with octet-counted framing (RFC 6587 §3.4.1, RFC 5425 §4.3), or a Unix
// stream socket (rsyslog's imptcp/imuxsock stream listeners take the same
// framing). A stream connection is opened on first use, kept, and dropped on any
// error, so the next batch reconnects. A batch counts as sent once its bytes are
// written to the socket: syslog has no acknowledgement (docs/audit.md says so).
import * as dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { octetCounted } from '../../core/audit/auditExportFormats.js';

export interface SyslogTarget {
  transport: 'udp' | 'tcp' | 'tls' | 'unix';
  host?: string | undefined;
  port?: number | undefined;
  path?: string | undefined;
  /** PEM file of the CA for TLS. */
  ca?: string | undefined;
}

export interface SyslogTransport {
  send(messages: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5000;

export function createSyslogTransport(target: SyslogTarget): SyslogTransport {
  return target.transport === 'udp' ? udpTransport(target) : streamTransport(target);
}

function udpTransport(target: SyslogTarget): SyslogTransport {
  let socket: dgram.Socket | undefined;
  return {
    async send(messages) {
      socket ??= dgram.createSocket(net.isIPv6(target.host ?? '') ? 'udp6' : 'udp4');
      const open = socket;
      for (const message of messages) {
        await new Promise<void>((resolve, reject) => open.send(Buffer.from(message, 'utf8'), target.port ?? 514, target.host ?? '127.0.0.1', (error) => (error ? reject(error) : resolve())));
      }
    },
    async close() {
      socket?.close();
      socket = undefined;
    },
  };
}

function streamTransport(target: SyslogTarget): SyslogTransport {
  let socket: net.Socket | undefined;
  let connecting: Promise<net.Socket> | undefined;
  const connect = (): Promise<net.Socket> =>
    new Promise<net.Socket>((resolve, reject) => {
      const ready = target.transport === 'tls' ? 'secureConnect' : 'connect';
      const created =
        target.transport === 'unix'
          ? net.createConnection({ path: target.path ?? '' })
          : target.transport === 'tls'
            ? tls.connect({ host: target.host, port: target.port ?? 6514, servername: net.isIP(target.host ?? '') === 0 ? target.host : undefined, ...(target.ca === undefined ? {} : { ca: readFileSync(target.ca) }) })
            : net.createConnection({ host: target.host, port: target.port ?? 514 });
      const timer = setTimeout(() => created.destroy(new Error(`no connection to the syslog receiver within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      created.once(ready, () => {
        clearTimeout(timer);
        created.setNoDelay?.(true);
        resolve(created);
      });
      created.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      // The receiver sends nothing; anything it does send is read and dropped so the socket never stalls.
      created.on('data', () => undefined);
      created.on('close', () => {
        if (socket === created) socket = undefined;
      });
      created.on('error', () => {
        if (socket === created) socket = undefined;
      });
    });
  return {
    async send(messages) {
      if (socket === undefined || socket.destroyed) {
        connecting ??= connect().finally(() => {
          connecting = undefined;
        });
        socket = await connecting;
      }
      const open = socket;
      const frames = messages.map(octetCounted).join('');
      await new Promise<void>((resolve, reject) => {
        const onClose = (): void => reject(new Error('the syslog receiver closed the connection during the write'));
        open.once('close', onClose);
        open.write(frames, 'utf8', (error) => {
          open.off('close', onClose);
          if (error) {
            open.destroy();
            reject(error);
          } else resolve();
        });
      });
    },
    async close() {
      const open = socket;
      socket = undefined;
      if (open === undefined || open.destroyed) return;
      await new Promise<void>((resolve) => {
        open.end(() => resolve());
        setTimeout(() => {
          open.destroy();
          resolve();
        }, 1000).unref();
      });
    },
  };
}
