// The request body as the listener admits it (hardening 1): counted while it
// streams, refused at the cap before any route, guard or parser sees it. Every
// request passes here, whatever its method, route or authentication.
import type { IncomingMessage } from 'node:http';

export interface BodyAdmission {
  /** The whole body arrived within the cap. */
  admitted(body: Buffer): void;
  /** The declared or streamed size passed the cap; called once, before anything was buffered beyond it. */
  refused(): void;
}

/**
 * Reads a request body of at most `maxBytes`, declared (Content-Length) or
 * chunked. Past the cap the buffered part is dropped and the rest of the
 * stream is discarded as it arrives, so a body that never ends holds no more
 * than the cap however long it runs; closing the connection is the caller's.
 */
export function admitRequestBody(request: IncomingMessage, maxBytes: number, admission: BodyAdmission): void {
  let chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  const refuse = (): void => {
    refused = true;
    chunks = [];
    admission.refused();
  };
  request.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > maxBytes) refuse();
    else chunks.push(chunk);
  });
  request.on('end', () => {
    if (refused) return;
    const body = chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
    chunks = [];
    admission.admitted(body);
  });
  request.on('close', () => {
    chunks = [];
  });
  const declared = Number(request.headers['content-length'] ?? '0');
  if (declared > maxBytes) refuse();
}
