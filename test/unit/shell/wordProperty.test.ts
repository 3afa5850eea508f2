// Issue 38, "Words": assent's static reading of a word agrees with real bash's
// expansion of it, or assent does not call the word static. WORD_RUNS / WORD_SEED
// override the 2,000 words from seed 38 (`npm run bench` runs 50,000).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { checkWords } from '../../helpers/wordOracle.js';

const RUNS = Number(process.env.WORD_RUNS ?? 2000);
const SEED = Number(process.env.WORD_SEED ?? 38);

let parser: ShellParser;
beforeAll(async () => {
  parser = await loadShellParser();
});

describe('a word as bash expands it', () => {
  it(`agrees with real bash over ${RUNS} generated words, or assent refuses the word`, () => {
    const result = checkWords(parser, SEED, RUNS);
    expect(result.checked).toBe(RUNS);
    // The property is not vacuous: many generated words are static, and bash saw them all.
    expect(result.staticWords).toBeGreaterThan(RUNS / 5);
    expect(result.disagreements).toEqual([]);
  });

  it('reads a bracket split across quoted pieces as a glob, as bash does', () => {
    for (const word of ['.e[n]v', '.e["n"]v', ".en[v'']", '~/.ss["h"]/id_rsa', '.gi["t"]/config', ".e[\\n]v", '.e[n"]"v']) {
      const parsed = parser.parse(`cat ${word}`);
      expect(parsed.errors.length > 0 || parsed.commands[0]?.words[1]?.static === false, word).toBe(true);
    }
    // A lone `[` or `]` opens nothing: the word stays static.
    for (const word of ['[', ']', 'a]b[', "$'.e['n]v", '"[a]"', "'.e[n]v'", '\\[a]']) {
      const parsed = parser.parse(`echo ${word}`);
      expect(parsed.errors, word).toEqual([]);
      expect(parsed.commands[0]?.words[1]?.static, word).toBe(true);
    }
  });
});
