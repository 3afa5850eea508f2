// A second principal for team-identity tests (R-TEAM-3): a bearer token made
// with `assent token create` at a terminal, and API calls made with it over
// the daemon's HTTP head, as a reviewer's script would make them.
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { TempHome } from './daemon.js';
import { runCliInTerminal } from './pty.js';

/** `assent token create --name NAME` at a terminal (it refuses headless); returns the token read from its 0600 file. */
export async function createToken(home: TempHome, name: string): Promise<string> {
  const out = join(home.home, '..', `${name}.token`);
  const created = await runCliInTerminal(home, ['token', 'create', '--name', name, '--ttl', '1h', '--out', out, '--json']);
  if (created.code !== 0) throw new Error(`token create failed (${created.code}): ${created.stderr}`);
  const token = readFileSync(out, 'utf8').trim();
  rmSync(out);
  return token;
}

/** The daemon's page URL from `daemon status` once its HTTP head listens (web.listen 127.0.0.1:0). */
export async function webUrl(home: TempHome): Promise<URL> {
  for (let i = 0; i < 200; i += 1) {
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { web?: { url?: string | null } } };
    const url = status.data.web?.url;
    if (typeof url === 'string') return new URL(url);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the web head did not start');
}

/** One `POST /api/v1/<operation>` with a bearer token (no cookie, no Origin), answered as status and JSON. */
export function callApi(url: URL, token: string, operation: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `/api/v1/${operation}`,
        method: 'POST',
        headers: { host: url.host, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
