// assent itself, from an agent's shell (R-POL-8): only the read-only
// subcommands `pending`, `daemon status`, `policy explain` and `audit`
// (`audit verify`). Anything else could approve, reconfigure or remove the gate.
import type { ShellWord } from '../shellCommand.js';
import { judgeModel, refusedVerdict } from './judgeModel.js';
import { opt, type OptionSyntax, type ProgramModel, type WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

// commander: exact long names, options anywhere among the arguments.
const COMMANDER: OptionSyntax = { long: 'exact', permute: true };
const JSON_FLAG = opt('json');
const HELP = opt('h|help');

function fixedOperands(kinds: WordKind[]): ProgramModel['plan'] {
  return (_options, operands) => ({ kinds: kinds.slice(0, operands.length) });
}

export const ASSENT_PENDING: ProgramModel = { name: 'assent pending', syntax: COMMANDER, options: [JSON_FLAG, HELP], plan: fixedOperands(['literal']) };
export const ASSENT_DAEMON_STATUS: ProgramModel = { name: 'assent daemon status', syntax: COMMANDER, options: [JSON_FLAG, HELP], plan: fixedOperands([]) };
export const ASSENT_POLICY_EXPLAIN: ProgramModel = {
  name: 'assent policy explain',
  syntax: COMMANDER,
  options: [JSON_FLAG, HELP, opt('input=', { value: 'inert' }), opt('cwd=', { value: 'read-path' })],
  plan: fixedOperands(['literal', 'literal']),
};
export const ASSENT_AUDIT: ProgramModel = {
  name: 'assent audit',
  syntax: COMMANDER,
  options: [JSON_FLAG, HELP, opt('since='), opt('csv'), opt('all-hosts')],
  plan: fixedOperands([]),
};
export const ASSENT_AUDIT_VERIFY: ProgramModel = { name: 'assent audit verify', syntax: COMMANDER, options: [JSON_FLAG, HELP, opt('all-hosts')], plan: fixedOperands([]) };

const SUBCOMMANDS: ReadonlyMap<string, ProgramModel> = new Map([
  ['pending', ASSENT_PENDING],
  ['daemon status', ASSENT_DAEMON_STATUS],
  ['policy explain', ASSENT_POLICY_EXPLAIN],
  ['audit verify', ASSENT_AUDIT_VERIFY],
  ['audit', ASSENT_AUDIT],
]);

export function judgeAssent(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const [first, second] = args;
  if (first?.static === true && ['--version', '-V'].includes(first.text) && args.length === 1) return { model: 'assent', reads: [], writes: [], trees: [] };
  for (const [path, model] of SUBCOMMANDS) {
    const parts = path.split(' ');
    const matches = parts.every((part, i) => args[i]?.static === true && args[i]?.text === part);
    if (matches) return judgeModel(model, args.slice(parts.length), assigned);
  }
  const named = [first, second].filter((w): w is ShellWord => w !== undefined && w.static && !w.text.startsWith('-')).map((w) => w.text).join(' ');
  return refusedVerdict('assent', {
    reason: `assent ${named === '' ? 'without a read-only subcommand' : named} is not one of its read-only subcommands (pending, daemon status, policy explain, audit): an agent must not change its own gate`,
  });
}
