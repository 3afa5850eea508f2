// R-SH-8: every node type tree-sitter's bash grammar can produce is listed in the
// decomposer's table as modelled or refused. The grammar is walked here, so a
// grammar update that adds a type fails until the type is given a handling.
import type * as TreeSitter from 'web-tree-sitter';
import { beforeAll, describe, expect, it } from 'vitest';
import { NODE_TYPES, nodeRule, unmodelledNode } from '../../../src/shell/nodeTypes.js';
import { loadBashLanguage, loadShellParser } from '../../../src/shell/shellParser.js';

let language: TreeSitter.Language;

/** Every visible node type of the grammar, named or anonymous (hidden rules never appear in a tree). */
function grammarTypes(): { type: string; named: boolean }[] {
  const types = new Map<string, boolean>();
  for (let id = 0; id < language.nodeTypeCount; id += 1) {
    const type = language.nodeTypeForId(id);
    if (type === null || !language.nodeTypeIsVisible(id)) continue;
    types.set(type, language.nodeTypeIsNamed(id));
  }
  return [...types].map(([type, named]) => ({ type, named }));
}

beforeAll(async () => {
  language = await loadBashLanguage();
});

describe('R-SH-8 node-type registry', () => {
  it('lists every node type the bash grammar can produce, named or anonymous, with how it is handled', () => {
    const types = grammarTypes();
    expect(types.length).toBeGreaterThan(150); // the grammar has ~59 named and ~122 anonymous visible types
    const unlisted = types.filter(({ type }) => nodeRule(type) === undefined).map(({ type }) => type);
    expect(unlisted, 'node types the grammar produces that src/shell/nodeTypes.ts does not list').toEqual([]);
    const wrongKind = types.filter(({ type, named }) => nodeRule(type)?.named !== named).map(({ type }) => type);
    expect(wrongKind, 'listed as named when the grammar has them anonymous, or the other way').toEqual([]);
  });

  it('lists the parse-error node, and gives every entry a description of how it is modelled', () => {
    expect(nodeRule('ERROR')?.kind).toBe('statement');
    for (const [type, rule] of NODE_TYPES) expect(rule.how, type).not.toBe('');
  });

  it('lists nothing the grammar cannot produce (a stale entry would hide a renamed type)', () => {
    const produced = new Set(grammarTypes().map(({ type }) => type));
    const stale = [...NODE_TYPES.keys()].filter((type) => type !== 'ERROR' && !produced.has(type));
    expect(stale).toEqual([]);
  });

  it('an unknown or refused node is an error naming the construct, never skipped', () => {
    expect(unmodelledNode('brand_new_statement')).toBe('the command uses a "brand new statement", which assent does not model');
    expect(unmodelledNode('brand_new_statement', ' in the string given to bash -c')).toContain('in the string given to bash -c');
    expect(unmodelledNode('command')).toBeUndefined();
    for (const [type, rule] of NODE_TYPES) {
      if (rule.kind === 'refused') expect(unmodelledNode(type)).toContain('which assent does not model');
    }
  });

  it('a reserved word the grammar takes for a command name is an error, not a command to judge', async () => {
    const parser = await loadShellParser();
    // `sudo { …; }`: bash runs the program `{` and then fails on the `}`; the grammar parses both without an error.
    expect(parser.parse('sudo { ls; }').errors.join('\n')).toMatch(/reserved word \}/);
    expect(parser.parse('ls; then x').errors.join('\n')).toMatch(/reserved word then/);
    expect(parser.parse('echo { then } fi').errors).toEqual([]);
  });
});
