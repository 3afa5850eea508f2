// Properties of the settings-text edits (R-HOOK-7) over generated files: JSON
// with comments, odd spacing, trailing commas, CRLF. Install puts exactly
// assent's entries in (the text means the merged settings, every comment is
// still there, in order), and uninstall gives back the original bytes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { createScanner, parse as parseJsonc } from 'jsonc-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { agentTarget, type AgentId } from '../../../../src/heads/agents/agentTargets.js';
import { withAssentHooks, withAssentMcpServer } from '../../../../src/heads/agents/assentEntries.js';
import { applyInstall, applyUninstall, desiredHooks, editedJsonText, planInstall, planUninstall } from '../../../../src/heads/agents/installPlan.js';
import { readInstallRecords } from '../../../../src/heads/agents/installRecords.js';
import { detectJsonFormat } from '../../../../src/heads/agents/settingsFiles.js';
import { addAssentHooksText, removeAssentHooksText, removeAssentMcpServerText, setAssentMcpServerText } from '../../../../src/heads/agents/settingsTextEdits.js';
import { resolveStatePaths } from '../../../../src/state/statePaths.js';

const where = { env: {}, homedir: '/home/u', cwd: '/home/u/project' };
const installation = { node: '/usr/bin/node', hookEntry: '/srv/assent/dist/bin/assent-hook.js', cliEntry: '/srv/assent/dist/bin/assent.js' };
const server = { command: installation.node, args: [installation.cliEntry, 'mcp'] };

/** A JSON value with its layout: each gap (after an opening bracket, around ':' and ',', before a closing one) is drawn from `gaps`. */
type Shape = { kind: 'object'; members: [string, Shape][]; trailingComma: boolean } | { kind: 'array'; elements: Shape[]; trailingComma: boolean } | { kind: 'scalar'; value: unknown };

type Gap = 'none' | 'space' | 'spaces' | 'tab' | 'newline' | 'block' | 'line' | 'newline block' | 'multiline block';

/** The text of a gap at nesting `depth`: line comments always end with the line break they need. */
function gapText(gap: Gap, eol: string, depth: number): string {
  const indent = '  '.repeat(depth);
  switch (gap) {
    case 'none':
      return '';
    case 'space':
      return ' ';
    case 'spaces':
      return '   ';
    case 'tab':
      return '\t';
    case 'newline':
      return `${eol}${indent}`;
    case 'block':
      return ' /* note, with "quotes" and {braces} */ ';
    case 'line':
      return ` // a remark: "x": [1, 2]${eol}${indent}`;
    case 'newline block':
      return `${eol}${indent}/* a block */${eol}${indent}`;
    case 'multiline block':
      return `${eol}${indent}/*${eol}${indent} * two lines${eol}${indent} */${eol}${indent}`;
  }
}

function render(shape: Shape, gaps: Gap[], eol: string): string {
  let n = 0;
  const gap = (depth: number): string => gapText(gaps[n++ % gaps.length] as Gap, eol, depth);
  const walk = (node: Shape, depth: number): string => {
    if (node.kind === 'scalar') return JSON.stringify(node.value);
    const [open, close] = node.kind === 'object' ? ['{', '}'] : ['[', ']'];
    const items = node.kind === 'object' ? node.members.map(([key, value]) => `${JSON.stringify(key)}${gap(depth + 1)}:${gap(depth + 1)}${walk(value, depth + 1)}`) : node.elements.map((value) => walk(value, depth + 1));
    if (items.length === 0) return `${open}${gap(depth + 1)}${close}`;
    const body = items.map((item) => `${gap(depth + 1)}${item}${gap(depth + 1)}`).join(',');
    return `${open}${body}${node.trailingComma ? `,${gap(depth)}` : ''}${close}`;
  };
  return walk(shape, 0);
}

const scalar: fc.Arbitrary<Shape> = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null)).map((value) => ({ kind: 'scalar', value }));
const keyArb = fc.constantFrom('model', 'theme', 'env', 'permissions', 'allow', 'a', 'b', 'x y', 'ünï');

/** Other people's settings: plain values, nested objects and lists, with unique keys. */
const other: fc.Arbitrary<Shape> = fc.letrec<{ node: Shape }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.record({ kind: fc.constant('array' as const), elements: fc.array(tie('node'), { maxLength: 3 }), trailingComma: fc.boolean() }),
    fc.record({ kind: fc.constant('object' as const), members: fc.uniqueArray(fc.tuple(keyArb, tie('node')), { maxLength: 3, selector: ([key]) => key }), trailingComma: fc.boolean() }),
  ),
})).node;

const object = (members: [string, Shape][], trailingComma: boolean): Shape => ({ kind: 'object', members, trailingComma });
const array = (elements: Shape[], trailingComma: boolean): Shape => ({ kind: 'array', elements, trailingComma });
const command = (text: string): Shape => object([['type', { kind: 'scalar', value: 'command' }], ['command', { kind: 'scalar', value: text }]], false);

/**
 * A settings file for `agent`: other keys, maybe a `hooks` object with other
 * people's hooks under assent's events or others, maybe `mcpServers` with
 * other servers. A container assent adds to is never empty (an emptied one
 * goes on uninstall; installs.json gives those bytes back, tested below).
 */
function settingsArb(agent: AgentId): fc.Arbitrary<{ shape: Shape; gaps: Gap[]; eol: string }> {
  const target = agentTarget(agent, 'user', where);
  const entry = (text: string): Shape => (target.entryStyle === 'flat' ? object([['type', { kind: 'scalar', value: 'command' }], ['bash', { kind: 'scalar', value: text }]], false) : object([['matcher', { kind: 'scalar', value: 'Bash' }], ['hooks', array([command(text)], false)]], false));
  const eventList = fc.tuple(fc.array(fc.constantFrom('echo one', 'notify'), { minLength: 1, maxLength: 2 }), fc.boolean()).map(([commands, trailing]) => array(commands.map(entry), trailing));
  const hooks = fc
    .record({ before: fc.option(eventList), after: fc.option(eventList), stop: fc.option(eventList), trailing: fc.boolean() })
    .map(({ before, after, stop, trailing }) => {
      const members: [string, Shape][] = [];
      if (stop !== null || (before === null && after === null)) members.push(['Stop', stop ?? array([entry('notify')], false)]);
      if (before !== null) members.push([target.events.before, before]);
      if (after !== null) members.push([target.events.after, after]);
      return object(members, trailing);
    });
  const servers = fc.tuple(fc.boolean(), fc.boolean()).map(([two, trailing]) => object([['fs', object([['command', { kind: 'scalar', value: 'npx' }]], false)], ...(two ? ([['git', object([], false)]] as [string, Shape][]) : [])], trailing));
  return fc
    .record({
      others: fc.uniqueArray(fc.tuple(keyArb, other), { maxLength: 4, selector: ([key]) => key }),
      hooks: fc.option(hooks),
      servers: fc.option(servers),
      hooksFirst: fc.boolean(),
      trailing: fc.boolean(),
      gaps: fc.array(fc.constantFrom<Gap>('none', 'space', 'spaces', 'tab', 'newline', 'newline', 'newline', 'block', 'line', 'newline block', 'multiline block'), { minLength: 1, maxLength: 40 }),
      eol: fc.constantFrom('\n', '\r\n'),
    })
    .map(({ others, hooks: h, servers: s, hooksFirst, trailing, gaps, eol }) => {
      const own: [string, Shape][] = [...(h === null ? [] : ([['hooks', h]] as [string, Shape][])), ...(s === null ? [] : ([['mcpServers', s]] as [string, Shape][]))];
      return { shape: object(hooksFirst ? [...own, ...others] : [...others, ...own], trailing), gaps, eol };
    });
}

/** The comments of a text, in order. */
function comments(text: string): string[] {
  const scanner = createScanner(text, false);
  const found: string[] = [];
  for (let kind = scanner.scan(); kind !== 17; kind = scanner.scan()) {
    if (kind === 12 || kind === 13) found.push(scanner.getTokenValue());
  }
  return found;
}

const AGENTS: AgentId[] = ['claude-code', 'gemini', 'copilot', 'qwen'];

describe('R-HOOK-7 settings edits on generated files with comments, odd spacing, trailing commas and CRLF', () => {
  for (const agent of AGENTS) {
    it(`${agent}: install means exactly the merged settings and keeps every comment; uninstall gives back the bytes`, () => {
      const target = agentTarget(agent, 'user', where);
      const hooks = desiredHooks(target, installation, 110);
      fc.assert(
        fc.property(settingsArb(agent), ({ shape, gaps, eol }) => {
          const text = render(shape, gaps, eol);
          // Whitespace inside an empty {} is not kept (an emptied container has none); installs.json gives it back, tested below.
          fc.pre(shape.kind !== 'object' || shape.members.length > 0 || /\/[*/]/.test(text));
          const format = detectJsonFormat(text);
          const installed = setAssentMcpServerText(addAssentHooksText(removeAssentHooksText(text), target, hooks, format), server, format);
          const errors: unknown[] = [];
          const value = parseJsonc(installed, errors as never, { allowTrailingComma: true }) as Record<string, unknown>;
          expect(errors).toEqual([]);
          const original = parseJsonc(text, [], { allowTrailingComma: true }) as Record<string, unknown>;
          expect(value).toEqual(withAssentMcpServer(withAssentHooks(original, target, hooks, 'f'), server, 'f'));
          expect(comments(installed)).toEqual(comments(text));
          if (eol === '\r\n') expect(installed).not.toMatch(/[^\r]\n/);
          expect(removeAssentMcpServerText(removeAssentHooksText(installed))).toBe(text);
          // Hooks of an older assent (another path) are replaced: the same bytes as a first install.
          const withHooks = addAssentHooksText(text, target, hooks, format);
          expect(addAssentHooksText(removeAssentHooksText(withHooks.replaceAll('/srv/assent/', '/old/assent/')), target, hooks, format)).toBe(withHooks);
          // An older server entry is replaced in place.
          expect(setAssentMcpServerText(installed.replaceAll(installation.cliEntry, '/old/assent/dist/bin/assent.js'), server, format)).toBe(installed);
        }),
        { numRuns: Number(process.env.PROP_RUNS ?? 150) },
      );
    });
  }

  it('through editedJsonText: Gemini keeps a commented file as text; Claude Code refuses it, naming the file', () => {
    const gemini = agentTarget('gemini', 'user', where);
    const claude = agentTarget('claude-code', 'user', where);
    const text = '{\r\n  // my model\r\n  "model": "pro" /* for now */\r\n}\r\n';
    const edit = (t: typeof gemini) => (s: Record<string, unknown>) => withAssentHooks(s, t, desiredHooks(t, installation, 110), 'settings.json');
    const editText = (t: typeof gemini) => (x: string, f: ReturnType<typeof detectJsonFormat>) => addAssentHooksText(x, t, desiredHooks(t, installation, 110), f);
    const how: { textKept?: boolean } = {};
    const installed = editedJsonText('settings.json', text, edit(gemini), editText(gemini), { dialect: gemini.jsonDialect, how });
    expect(how.textKept).toBe(true);
    expect(installed.startsWith('{\r\n  // my model\r\n  "model": "pro", /* for now */\r\n  "hooks": {\r\n')).toBe(true);
    expect(() => editedJsonText('settings.json', text, edit(claude), editText(claude), { dialect: claude.jsonDialect })).toThrow(
      /settings\.json is not valid JSON \(.*line 2, column 3.*it holds comments, and this agent reads its settings as plain JSON\)/,
    );
    // A trailing comma is an error for Gemini CLI too (strip-json-comments leaves it to JSON.parse).
    expect(() => editedJsonText('settings.json', '{"a": 1,}', edit(gemini), editText(gemini), { dialect: 'comments' })).toThrow(/settings\.json is not valid JSON/);
  });

  it('a commented file whose text edit fails is refused, not re-serialized without its comments', () => {
    const text = '{\n  // keep me\n  "a": 1\n}\n';
    expect(() => editedJsonText('settings.json', text, (s) => ({ ...s, hooks: {} }), () => 'not json', { dialect: 'comments' })).toThrow(/settings\.json holds comments.*Nothing was changed/);
  });
});

describe('R-HOOK-7 install then uninstall on disk restores generated files byte for byte', () => {
  const root = mkdtempSync(join(tmpdir(), 'assent-props-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let run = 0;
  for (const agent of ['gemini', 'qwen'] as AgentId[]) {
    it(`${agent}: with --mcp, through the plan, the backup and installs.json`, () => {
      fc.assert(
        fc.property(settingsArb(agent), ({ shape, gaps, eol }) => {
          // Gemini CLI and Qwen Code read comments but not trailing commas: generated files without them.
          const strip = (s: Shape): Shape => (s.kind === 'scalar' ? s : s.kind === 'object' ? object(s.members.map(([k, v]) => [k, strip(v)]), false) : array(s.elements.map(strip), false));
          const text = render(strip(shape), gaps, eol);
          const home = join(root, `h${(run += 1)}`);
          const here = { env: {}, homedir: home, cwd: join(home, 'project') };
          const paths = resolveStatePaths({ ASSENT_HOME: join(home, 'state') }, home);
          const file = agentTarget(agent, 'user', here).hooksFile;
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, text);
          const plan = planInstall({ agent, scope: 'user', where: here, installation, hookTimeoutSeconds: 110, mcp: true });
          expect(plan.files[0]?.changed).toBe(true);
          applyInstall(plan, { paths, now: new Date('2026-12-01T10:00:00Z') });
          const installed = readFileSync(file, 'utf8');
          expect(comments(installed)).toEqual(comments(text));
          const back = planUninstall({ agent, scope: 'user', where: here, mcp: true, records: readInstallRecords(paths) });
          expect(back.files[0]?.restoredExactly).toBe(true);
          applyUninstall(back, { paths, now: new Date('2026-12-01T10:00:01Z') });
          expect(readFileSync(file, 'utf8')).toBe(text);
          expect(existsSync(file)).toBe(true);
        }),
        { numRuns: 25 },
      );
    });
  }
});
