// R-D-5 first resolver wins across processes: 8 processes open the built
// journal and race to resolve one pending approval; exactly one succeeds.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/journal.js';

const DIST_JOURNAL = path.join(import.meta.dirname, '../../dist/journal/journal.js');

const RACER = `
import { Journal } from ${JSON.stringify(pathToFileURL(DIST_JOURNAL).href)};
const [file, channel, go] = process.argv.slice(1);
const journal = Journal.open(file);
// Start together: spin until the shared start time.
while (Date.now() < Number(go)) {}
const won = journal.resolveApproval('abcde', { state: 'approved', channel, decidedAt: Date.now() });
journal.close();
process.stdout.write(won ? 'won' : 'lost');
`;

describe('R-D-5 journal compare-and-set across processes', () => {
  let tmp: string | undefined;

  beforeAll(() => {
    if (!fs.existsSync(DIST_JOURNAL)) throw new TypeError(`${DIST_JOURNAL} is missing; run \`npm run build\` before the e2e tests`);
  });

  afterEach(() => {
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('8 racing processes resolve one approval exactly once, and the journal records the winner', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-race-'));
    const file = path.join(tmp, 'journal.db');
    const journal = Journal.open(file);
    journal.insertApproval({
      id: 'abcde',
      sessionId: 's1',
      kind: 'tool',
      server: 'fs',
      tool: 'write_file',
      args: {},
      argsSha256: 'v1:sha256:00',
      requestedAt: 1,
      expiresAt: Date.now() + 60_000,
      caller: {},
      handoff: false,
      state: 'pending',
    });
    journal.close();
    const go = Date.now() + 1500;
    const outputs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', RACER, file, `racer${i}`, String(go)], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          let err = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve(out) : reject(new TypeError(`racer ${i} exited ${code}: ${err}`))));
        }),
      ),
    );
    expect(outputs.filter((o) => o === 'won')).toHaveLength(1);
    expect(outputs.filter((o) => o === 'lost')).toHaveLength(7);
    const reopened = Journal.open(file);
    try {
      const winner = outputs.indexOf('won');
      expect(reopened.getApproval('abcde')).toMatchObject({ state: 'approved', channel: `racer${winner}` });
    } finally {
      reopened.close();
    }
  });
});
