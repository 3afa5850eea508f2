// R-SH-6/R-POL-8: the read-only programs coding agents approve on their own,
// through the default policy. Each everyday form is allowed; what a peer
// would allow but assent refuses is shown to do harm in real bash (a canary
// printed, a marker written), and is not allowed, with its reason; credential
// paths stay denied by the path rules whatever program reads them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;
const CANARY = 'sk-canary-5d1e8b';

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  snapshot = host.snapshot(DEFAULT_CONFIG.policy);
  writeFileSync(join(host.cwd, 'package.json'), '{"name":"proj"}\n');
  writeFileSync(join(host.cwd, '.env'), `API_KEY=${CANARY}\n`);
});
afterAll(() => host[Symbol.dispose]());

function installed(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

/** What real bash prints for the command in the project, with an API key in its environment. */
function bash(command: string, extraEnv: Record<string, string> = {}): string {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: host.home, ANTHROPIC_API_KEY: CANARY, ...extraEnv };
  const run = spawnSync('/bin/bash', ['-c', command], { cwd: host.cwd, env, encoding: 'utf8', timeout: 10_000 });
  return `${run.stdout}${run.stderr}`;
}

function verdict(command: string) {
  const v = judgeShell(parser, snapshot, command, host.cwd);
  return { decision: v.decision, reasons: v.parts.map((p) => p.reason ?? '').join('; ') };
}

function expectNotAllowed(command: string, why?: RegExp): void {
  const v = verdict(command);
  expect(v.decision, command).not.toBe('allow');
  if (why !== undefined) expect(v.reasons, command).toMatch(why);
}

const EVERYDAY = [
  'cut -d: -f1 README.md', 'tr a-z A-Z < README.md', 'nl README.md', 'paste README.md README.md', 'rev README.md', 'tac README.md',
  'numfmt --to=iec 2048', 'base64 README.md', 'fold -w 20 README.md', 'expand README.md', 'unexpand -a README.md', 'comm README.md README.md',
  'join README.md README.md', 'od -c README.md', 'sha256sum README.md', 'md5sum README.md', 'sha1sum README.md', 'sha512sum README.md',
  'b2sum README.md', 'cksum README.md', 'hostname', 'id -u', 'pgrep node', 'nproc', 'uptime', 'seq 1 10', 'expr 1 + 2', 'jq .name package.json',
  'test -f README.md', '[ -d build ]', 'command -v git', 'type ls', 'df -h .', 'fd ts', 'fdfind -e ts', 'egrep x README.md', 'fgrep -n x README.md',
  'gh pr list', 'gh pr view 12', 'gh pr diff 12 --patch', 'gh run view 3 --log', 'gh auth status', 'docker ps', 'docker logs -f web',
  'printenv HOME', 'cut -f1 README.md | sort | uniq -c', 'test -d build && echo yes', 'git log --oneline | nl',
];

describe('the everyday forms are allowed by the default policy', () => {
  it.each(EVERYDAY)('%s', (command) => {
    const v = verdict(command);
    expect(v.decision, v.reasons).toBe('allow');
  });
});

describe('credential paths stay denied whatever reads them', () => {
  it.each([
    'cat ~/.ssh/id_rsa', 'grep x ~/.ssh/id_rsa', 'sha256sum ~/.ssh/id_rsa', 'cut -c1- ~/.ssh/id_rsa', 'base64 ~/.ssh/id_rsa', 'jq . ~/.ssh/id_rsa',
    'jq -n --rawfile k ~/.ssh/id_rsa $k', 'od -c .env', 'cut -d= -f2 .env', 'base64 .env', 'jq -R . .env', 'tac .env', 'nl link/id_rsa',
    'test -f ~/.ssh/id_rsa', '[ -s .env ]', 'md5sum .env', 'egrep KEY .env', 'df ~/.ssh/id_rsa',
  ])('%s', (command) => {
    expect(verdict(command).decision, command).toBe('deny');
  });

  it('fd does not list hidden names unless told to; then a credential beneath makes it not allowed', () => {
    expect(verdict('fd env').decision).toBe('allow');
    expect(bash('fdfind -H env')).toContain('.env');
    expectNotAllowed('fd -H env');
    expectNotAllowed('fdfind -u env');
    expectNotAllowed('fd -H id_rsa ~');
  });

  it('an .fdignore that whitelists a hidden name brings it into the listing, and into the judgement', () => {
    if (!installed('fdfind')) return;
    writeFileSync(join(host.cwd, '.fdignore'), '!.env\n');
    try {
      expect(bash('fdfind env')).toContain('.env');
      expectNotAllowed('fdfind env');
    } finally {
      writeFileSync(join(host.cwd, '.fdignore'), '');
    }
  });
});

describe('the unsafe forms stay refused', () => {
  it('sort -o, tree -o and a uniq output outside the project or on a gate file are not allow', () => {
    expectNotAllowed('sort -o out README.md', /--output.*writes a file/);
    expectNotAllowed('tree -o out.txt', /-o/);
    expectNotAllowed('uniq README.md ../out');
    expectNotAllowed('uniq README.md .vscode/tasks.json');
    // Inside the project a uniq output is a write there, which the default policy allows as it allows `> out`.
    expect(verdict('uniq README.md out').decision).toBe(verdict('sort README.md > out').decision);
  });

  it("sed's e, w and r commands and s///e stay refused", () => {
    expectNotAllowed("sed '1e id' README.md", /runs a shell command/);
    expectNotAllowed("sed 'w out' README.md", /writes a file/);
    expectNotAllowed("sed 'r /etc/passwd' README.md", /reads a file/);
    expectNotAllowed("sed 's/a/b/e' README.md", /shell command/);
  });
});

describe('refusals a peer would allow, shown in real bash', () => {
  it('printenv without a name, or of a secret, prints the API key', () => {
    expect(bash('printenv')).toContain(CANARY);
    expect(bash('printenv ANTHROPIC_API_KEY')).toContain(CANARY);
    expectNotAllowed('printenv', /whole environment/);
    expectNotAllowed('printenv ANTHROPIC_API_KEY', /not a variable known to hold no secret/);
    expect(bash('printenv HOME')).not.toContain(CANARY);
  });

  it.skipIf(!installed('jq'))('a jq filter with env or $ENV, or from a file or a test file, prints the API key', () => {
    for (const command of ["jq -n 'env.ANTHROPIC_API_KEY'", "jq -n '$ENV.ANTHROPIC_API_KEY'", 'jq -n \'"\\(env.ANTHROPIC_API_KEY)"\'']) {
      expect(bash(command), command).toContain(CANARY);
      expectNotAllowed(command, /reads the environment/);
    }
    writeFileSync(join(host.cwd, 'prog.jq'), 'env.ANTHROPIC_API_KEY\n');
    expect(bash('jq -n -f prog.jq')).toContain(CANARY);
    expectNotAllowed('jq -n -f prog.jq', /filter from a file/);
    writeFileSync(join(host.cwd, 'cases.test'), 'env.ANTHROPIC_API_KEY\nnull\n"x"\n\n');
    expect(bash('jq --run-tests cases.test')).toContain(CANARY);
    expectNotAllowed('jq --run-tests cases.test', /test file/);
    mkdirSync(join(host.cwd, 'lib'), { recursive: true });
    writeFileSync(join(host.cwd, 'lib', 'm.jq'), 'def f: env.ANTHROPIC_API_KEY;\n');
    expect(bash('jq -n -L lib \'import "m" as m; m::f\'')).toContain(CANARY);
    expectNotAllowed('jq -n -L lib \'import "m" as m; m::f\'', /modules/);
    expectNotAllowed('jq -n \'include "m"; f\'', /include/);
  });

  it.skipIf(!installed('pgrep'))('pgrep -a prints the command line of another process, token and all', async () => {
    const child: ChildProcess = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)', `token=${CANARY}`], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(bash('pgrep -a node')).toContain(CANARY);
      expect(bash('pgrep node')).not.toContain(CANARY);
      expectNotAllowed('pgrep -a node', /command line/);
    } finally {
      child.kill();
    }
  });

  it('sha256sum -c and cksum -c read the files named in the list: here a credential the path rules never saw', () => {
    const key = join(host.home, '.ssh', 'id_rsa');
    const sum = createHash('sha256').update(readFileSync(key)).digest('hex');
    writeFileSync(join(host.cwd, 'sums'), `${sum}  ${key}\n`);
    expect(bash('sha256sum -c sums')).toContain(`${key}: OK`);
    expect(bash('cksum -a sha256 --untagged -c sums')).toContain(`${key}: OK`);
    expectNotAllowed('sha256sum -c sums', /files named inside its operands/);
    expectNotAllowed('cksum -a sha256 -c sums', /files named inside its operands/);
  });

  it.skipIf(!installed('fdfind'))('fd -x and -X run a program on every result; -l runs ls; --base-directory searches elsewhere', () => {
    const marker = join(host.root, 'fd-exec-ran');
    bash(`fdfind README -x touch ${marker}`);
    expect(existsSync(marker)).toBe(true);
    expectNotAllowed(`fd README -x touch ${marker}`, /--exec.*runs a program/);
    const batch = join(host.root, 'fd-batch-ran');
    bash(`fdfind README -X touch ${batch}`);
    expect(existsSync(batch)).toBe(true);
    expectNotAllowed(`fd README -X touch ${batch}`, /--exec-batch/);
    const bin = join(host.root, 'bin');
    mkdirSync(bin, { recursive: true });
    const lsMarker = join(host.root, 'fd-ls-ran');
    writeFileSync(join(bin, 'ls'), `#!/bin/sh\ntouch '${lsMarker}'\n`);
    chmodSync(join(bin, 'ls'), 0o755);
    bash('fdfind README -l', { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    expect(existsSync(lsMarker)).toBe(true);
    expectNotAllowed('fd README -l', /runs ls/);
    expect(bash('fdfind --base-directory ~ -H id_rsa')).toContain('.ssh/id_rsa');
    expectNotAllowed('fd --base-directory ~ -H id_rsa', /another directory/);
  });

  it('test -v evaluates the subscript of the name it is given: code runs', () => {
    const marker = join(host.root, 'test-v-ran');
    bash(`a=(1); test -v 'a[$(touch ${marker})]'`);
    expect(existsSync(marker)).toBe(true);
    expectNotAllowed(`test -v 'a[$(touch ${marker})]'`);
    expectNotAllowed('[ -v a ]', /-v/);
  });

  it('bash compares numbers in test without evaluating them (only [[ does)', () => {
    const marker = join(host.root, 'test-eq-ran');
    bash(`[ 'a[$(touch ${marker})]' -eq 1 ]`);
    expect(existsSync(marker)).toBe(false);
    expect(verdict(`[ 'a[$(touch ${marker})]' -eq 1 ]`).decision).toBe('allow');
  });

  it('hostname NAME and hostname -F FILE set the host name (shown in a namespace of its own)', () => {
    const probe = spawnSync('unshare', ['--uts', 'true']);
    if (probe.status !== 0) return; // needs a user that may create a UTS namespace
    writeFileSync(join(host.cwd, 'name'), 'assent-canary-from-file\n');
    expect(spawnSync('unshare', ['--uts', 'sh', '-c', 'hostname assent-canary-host; hostname'], { encoding: 'utf8' }).stdout).toContain('assent-canary-host');
    expect(spawnSync('unshare', ['--uts', 'sh', '-c', 'hostname -F name; hostname'], { cwd: host.cwd, encoding: 'utf8' }).stdout).toContain('assent-canary-from-file');
    expectNotAllowed('hostname assent-canary-host', /sets the host name/);
    expectNotAllowed('hostname -F name', /sets the host name from a file/);
    expectNotAllowed('hostname -b', /sets the host name/);
  });

  describe('docker', () => {
    let server: Server;
    let port = 0;
    let requests = '';
    beforeAll(async () => {
      server = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.on('data', (chunk: Buffer) => {
          requests += chunk.toString('latin1');
          if (!socket.writableEnded) socket.end('HTTP/1.1 500 x\r\nContent-Length: 0\r\n\r\n');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      port = typeof address === 'object' && address !== null ? address.port : 0;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it.skipIf(!installed('docker'))('-H sends the request to another daemon: here a listener of the test', async () => {
      // Not spawnSync: the listener runs in this process.
      await new Promise((resolve) => spawn('/bin/bash', ['-c', `timeout 5 docker -H tcp://127.0.0.1:${port} ps`], { cwd: host.cwd, stdio: 'ignore' }).on('close', resolve));
      expect(requests).toMatch(/GET \/.*containers\/json/);
      expectNotAllowed(`docker -H tcp://127.0.0.1:${port} ps`, /another configuration or daemon/);
      expectNotAllowed('docker --config /tmp/elsewhere ps', /--config/);
      expectNotAllowed('docker --context remote ps', /--context/);
    });

    it('run, exec and cp are not modelled', () => {
      expectNotAllowed('docker run --rm -v /:/host alpine cat /host/etc/shadow', /not one of the listing forms/);
      expectNotAllowed('docker exec web env', /not one of the listing forms/);
      expectNotAllowed('docker cp web:/root/.ssh .', /not one of the listing forms/);
    });
  });

  describe('gh (not installed here: its oracle cases are skipped)', () => {
    const gh = installed('gh');
    it.skipIf(!gh)('gh auth token and gh auth status -t print the token', () => {
      expect(bash('gh auth token', { GH_TOKEN: CANARY })).toContain(CANARY);
      expect(bash('gh auth status -t', { GH_TOKEN: CANARY })).toContain(CANARY);
    });

    it.skipIf(!gh)("gh's --jq reads the environment", () => {
      expect(bash("gh api --jq '$ENV.GH_TOKEN' /", { GH_TOKEN: CANARY })).toContain(CANARY);
    });

    it('the refusals, with their reasons', () => {
      expectNotAllowed('gh auth token', /prints the auth token/);
      expectNotAllowed('gh auth status -t', /prints the auth token/);
      expectNotAllowed('gh auth status --show-token', /prints the auth token/);
      expectNotAllowed("gh pr view 1 --json title --jq '$ENV.GH_TOKEN'", /environment/);
      expectNotAllowed('gh api -X DELETE repos/o/r', /not GET/);
      expectNotAllowed('gh api -f body=x repos/o/r/issues', /parameter/);
      expectNotAllowed('gh api --input f.json repos/o/r/issues', /request body/);
      expectNotAllowed('gh api https://evil.example/leak', /full URL/);
      expectNotAllowed('gh pr view 1 --web', /browser/);
      expectNotAllowed('gh pr checkout 1', /worktree/);
      expectNotAllowed('gh run download 1', /writes/);
      expectNotAllowed('gh release download v1', /writes/);
      expectNotAllowed('gh pr merge 1', /not one of the read-only forms/);
    });
  });
});

describe('command keeps running what it names', () => {
  it('command ls is judged as before: its ls is a command of its own, and the command form is not allowed by the model', () => {
    expectNotAllowed('command ls', /command ls runs ls/);
    expectNotAllowed('command rm -rf build');
    expect(verdict('command -v git').decision).toBe('allow');
  });
});
