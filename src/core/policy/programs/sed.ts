// sed (GNU sed 4.9) in its printing form: `sed -n SCRIPT FILE…` whose script
// has no command that writes, reads a named file or runs a program
// (R-POL-8), checked by parsing the script. -i edits files in place and -f
// reads a script this model cannot inspect: both refused.
import { checkSedScript, scriptIsQuiet } from './sedScript.js';
import { flags, GNU, GNU_STANDARD, opt, type OptionsSeen, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';

function plan(options: OptionsSeen, operands: readonly ParsedOperand[]) {
  const pieces = options.values('--expression');
  const fromOperand = pieces.length === 0;
  const scriptWord = fromOperand ? operands[0]?.word : undefined;
  if (fromOperand && scriptWord === undefined) return { kinds: [], refused: { reason: 'sed without a script' } };
  const kinds: WordKind[] = operands.map((_o, i) => (fromOperand && i === 0 ? 'literal' : 'read-path'));
  if (scriptWord !== undefined && !scriptWord.static) return { kinds };
  const script = scriptWord !== undefined ? scriptWord.text : pieces.map((p) => p.text).join('\n');
  const problem = checkSedScript(script);
  if (problem !== undefined) return { kinds, refused: { reason: problem } };
  // The default policy allows only the quiet form: what sed prints is what the script selects.
  if (!options.has('--quiet') && !scriptIsQuiet(scriptWord?.text ?? pieces[0]?.text ?? '')) {
    return { kinds, refused: { reason: 'sed without -n is not in the modelled form (`sed -n SCRIPT`)' } };
  }
  return { kinds };
}

export const SED: ProgramModel = {
  name: 'sed',
  syntax: GNU,
  options: [
    ...flags('n|quiet|silent', 'debug', 'follow-symlinks', 'posix', 'E|r|regexp-extended', 's|separate', 'sandbox', 'u|unbuffered', 'z|null-data|zero-terminated', 'b|binary'),
    // The script itself: a literal, so it can be parsed.
    opt('e|expression='),
    opt('l|line-length='),
    opt('f|file=', { refuse: 'reads the sed script from a file, which this model cannot inspect' }),
    opt('i|in-place[=]', { refuse: 'edits the files in place (a write)' }),
    ...GNU_STANDARD,
  ],
  plan,
};
