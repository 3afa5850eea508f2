// `assent config check` (R-CFG-5) against the built binary: every problem is
// printed, exit 0 when valid and 65 when not, one JSON document under --json.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const CLI = path.join(import.meta.dirname, '../../dist/bin/assent.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

describe('R-CFG-5 assent config check (built binary)', () => {
  let tmp: string;

  beforeAll(() => {
    if (!fs.existsSync(CLI)) throw new TypeError(`${CLI} is missing; run \`npm run build\` before the e2e tests`);
  });

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-cfgcheck-'));
  });

  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function run(args: string[]): Run {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', HOME: tmp, ASSENT_HOME: path.join(tmp, 'home') },
      cwd: tmp,
      timeout: 20_000,
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  function write(name: string, value: unknown): string {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    return file;
  }

  const broken = {
    servers: { fs: {}, 'a/b': { command: 'x' } },
    policy: { default: 'maybe', destructive: 1, tools: { 'fs/write_file': 'ask' }, consentTimeoutSeconds: 1501 },
    channels: { tty: 'yes' },
    approvals: { proofTtlSeconds: 0 },
    notifications: 'false',
    web: { listen: 'localhost' },
    auditRetentionDays: -1,
    extra: true,
  };
  const brokenPaths = [
    'servers.fs',
    'servers.a/b',
    'policy.default',
    'policy.destructive',
    'policy.tools.fs/write_file',
    'policy.consentTimeoutSeconds',
    'channels.tty',
    'approvals.proofTtlSeconds',
    'notifications',
    'web.listen',
    'auditRetentionDays',
  ];

  it('--json lists every problem with its key path and exits 65', () => {
    const result = run(['config', 'check', '--json', '--file', write('config.json', broken)]);
    expect(result.status).toBe(65);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { type: string; message: string; details: { problems: Array<{ severity: string; path: string; message: string }> } };
    };
    expect(doc.ok).toBe(false);
    expect(doc.error.type).toBe('config_invalid');
    const errors = doc.error.details.problems.filter((p) => p.severity === 'error').map((p) => p.path);
    expect(errors.sort()).toEqual([...brokenPaths].sort());
    expect(doc.error.details.problems).toContainEqual(expect.objectContaining({ severity: 'warning', path: 'extra' }));
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('human output prints one line per problem, never a stack trace, and exits 65', () => {
    const result = run(['config', 'check', '--file', write('config.json', broken)]);
    expect(result.status).toBe(65);
    for (const key of brokenPaths) expect(result.stdout).toContain(`error ${key}: `);
    expect(result.stdout).toContain('error policy.consentTimeoutSeconds: got the integer 1501; expected an integer from 1 to 1500');
    expect(result.stdout).toContain('warning extra: unknown key');
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('a valid file exits 0; --json says valid with its warnings', () => {
    const file = write('config.json', { servers: { fs: { command: 'npx' } }, policy: { default: 'deny', tools: { 'fs/read_file': 'allow' } }, extra: 1 });
    const human = run(['config', 'check', '--file', file]);
    expect(human.status).toBe(0);
    expect(human.stdout).toContain('is valid (1 warning)');
    const json = run(['config', 'check', '--json', '--file', file]);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      data: { valid: true, exists: true, problems: [{ severity: 'warning', path: 'extra' }] },
    });
  });

  it('without --file checks $ASSENT_HOME/config.json; a missing file means the defaults', () => {
    const missing = run(['config', 'check', '--json']);
    expect(missing.status).toBe(0);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: true, data: { valid: true, exists: false } });
    fs.mkdirSync(path.join(tmp, 'home'), { mode: 0o700 });
    fs.writeFileSync(path.join(tmp, 'home', 'config.json'), '{"policy": {"default": "deny",}}');
    const bad = run(['config', 'check']);
    expect(bad.status).toBe(65);
    expect(bad.stdout).toMatch(/error \(document\): not valid JSON.*line 1, column/);
  });

  it('R-CFG-5 (hardening 1) --file naming a missing file is an error naming the path, not "the defaults apply"', () => {
    const missing = path.join(tmp, 'no-such-config.json');
    const human = run(['config', 'check', '--file', missing]);
    expect(human.status).toBe(65);
    expect(human.stderr).toContain(missing);
    expect(human.stdout).not.toContain('defaults apply');
    const json = run(['config', 'check', '--json', '--file', missing]);
    expect(json.status).toBe(65);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { type: 'invalid_input', details: { path: missing } } });
  });

  it('R-CFG-5 R-TEAM-3 host.name, approvals.fourEyes and policy.quorum are checked with their key paths (exit 65); valid values pass', () => {
    const bad = write('config.json', {
      servers: { fs: { command: 'npx' } },
      host: { name: 'me@box' },
      approvals: { fourEyes: 'yes' },
      policy: { quorum: { 'fs/write_file': 0, 'fss/delete': 2, nonsense: 2 } },
    });
    const result = run(['config', 'check', '--file', bad]);
    expect(result.status).toBe(65);
    expect(result.stdout).toContain('error host.name: got a string ("me@box"); expected a host name of 1-64 letters');
    expect(result.stdout).toContain('error approvals.fourEyes: got a string ("yes"); expected true or false');
    expect(result.stdout).toContain('error policy.quorum.fs/write_file: got the integer 0; expected an integer from 1 to 16');
    expect(result.stdout).toContain('error policy.quorum.fss/delete: "fss" is not a server alias (did you mean "fs"?)');
    expect(result.stdout).toContain('error policy.quorum.nonsense: the key "nonsense" is not a tool id');
    const good = write('good.json', { servers: { fs: { command: 'npx' } }, host: { name: 'build-01' }, approvals: { fourEyes: true }, policy: { quorum: { 'fs/write_file': 2 } } });
    const valid = run(['config', 'check', '--file', good]);
    expect(valid.status, valid.stdout).toBe(0);
  });

  it('R-CFG-1 (hardening 1) a policy typo and a policy.tools key for an unknown server are errors (exit 65), not warnings', () => {
    const file = write('config.json', {
      servers: { fs: { command: 'npx' } },
      policy: { defualt: 'deny', tools: { 'fss/write_file': 'deny', 'fs/move_file': 'deny', 'claude/Bash': 'prompt' } },
    });
    const result = run(['config', 'check', '--file', file]);
    expect(result.status).toBe(65);
    expect(result.stdout).toContain('error policy.defualt: unknown key (did you mean "default"?)');
    expect(result.stdout).toContain('error policy.tools.fss/write_file: "fss" is not a server alias (did you mean "fs"?)');
    expect(result.stdout).not.toContain('policy.tools.fs/move_file');
    expect(result.stdout).not.toContain('policy.tools.claude/Bash');
  });

  it('R-CFG-1 R-AUD-4 a misspelt key inside audit or a sink is an error (exit 65) naming the key and the closest known one; the daemon refuses to start on it', () => {
    const file = write('config.json', {
      audit: {
        exprot: [{ kind: 'cef', file: path.join(tmp, 'a.cef') }],
        export: [
          { kind: 'otlp', url: 'http://127.0.0.1:4318/v1/logs', hedaers: { 'x-api-key': 'k-SECRET-9' } },
          { kind: 'cef', file: path.join(tmp, 'b.cef'), batchsize: 10 },
        ],
      },
    });
    const result = run(['config', 'check', '--file', file]);
    expect(result.status).toBe(65);
    expect(result.stdout).toContain('error audit.exprot: unknown key (did you mean "export"?)');
    expect(result.stdout).toContain('error audit.export.0.hedaers: unknown key (did you mean "headers"?)');
    expect(result.stdout).toContain('error audit.export.1.batchsize: unknown key (did you mean "batchSize"?)');
    expect(result.stdout).not.toContain('k-SECRET-9');
    fs.mkdirSync(path.join(tmp, 'home'), { mode: 0o700 });
    fs.copyFileSync(file, path.join(tmp, 'home', 'config.json'));
    const daemon = run(['daemon', 'run']);
    expect(daemon.status).not.toBe(0);
    expect(daemon.status).toBe(65);
    expect(`${daemon.stdout}${daemon.stderr}`).toContain('3 errors; first: audit.export.0.hedaers: unknown key (did you mean "headers"?)');
  });

  it('R-CFG-1 (agent actions 7) rejects a rule with an unknown decision, an empty match and a glob that does not compile, naming each key path', () => {
    const file = write('agent.json', {
      policy: {
        commands: { rules: [{ match: 'git *', decision: 'sometimes' }, { match: '', decision: 'allow' }] },
        paths: { rules: [{ glob: '~/.ssh/[', decision: 'deny' }] },
      },
    });
    const result = run(['config', 'check', '--file', file]);
    expect(result.status).toBe(65);
    expect(result.stdout).toMatch(/error policy\.commands\.rules\.0\.decision: .*"allow", "deny" or "prompt"/);
    expect(result.stdout).toMatch(/error policy\.commands\.rules\.1\.match: /);
    expect(result.stdout).toMatch(/error policy\.paths\.rules\.0\.glob: .*does not compile/);
  });

  it('R-POL-8 assent init writes a config.json that the check accepts, and refuses a second time without --force', () => {
    expect(run(['init']).status).toBe(0);
    expect(run(['config', 'check']).stdout).toMatch(/is valid/);
    const again = run(['init']);
    expect(again.status).toBe(65);
    expect(again.stderr).toMatch(/already exists.*--force/);
    expect(run(['init', '--force']).status).toBe(0);
    expect(fs.readdirSync(path.join(tmp, 'home')).some((name) => name.startsWith('config.json.assent-backup-'))).toBe(true);
  });
});
