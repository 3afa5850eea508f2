// bash builtins that say what a command name is and run nothing: `command -v`
// / `command -V` and `type` (bash 5.2). Without -v or -V, `command NAME …`
// runs NAME (the parser judges what it runs as a command of its own), so this
// model refuses that form and the line is decided as before. bash builtins
// bundle their letters (`-pv`) and stop at the first name or `--`.
import { flags, opt, type OptionSyntax, type ProgramModel } from './programModel.js';

const BUILTIN: OptionSyntax = { long: 'exact', permute: false };

export const COMMAND: ProgramModel = {
  name: 'command',
  syntax: BUILTIN,
  options: [...flags('p', 'v', 'V'), opt('help')],
  plan: (options, operands) => {
    if (options.has('-v', '-V', '--help')) return { kinds: operands.map(() => 'inert') };
    const name = operands[0]?.word.text ?? '';
    return { kinds: [], refused: { reason: `command ${name} runs ${name === '' ? 'nothing' : name} (judged as a command of its own); only command -v and command -V just describe a name` } };
  },
};

export const TYPE: ProgramModel = {
  name: 'type',
  syntax: BUILTIN,
  options: [...flags('a', 'f', 'p', 'P', 't'), opt('help')],
  plan: (_options, operands) => ({ kinds: operands.map(() => 'inert') }),
};
