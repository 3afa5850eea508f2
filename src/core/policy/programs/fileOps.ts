// mkdir and touch (GNU coreutils 9.1): every operand is a path they create or
// write; the policy allows it under the cwd unless it is a gate file (R-SH-9).
import { every, flags, GNU, GNU_STANDARD, opt, type ProgramModel } from './programModel.js';

export const MKDIR: ProgramModel = {
  name: 'mkdir',
  syntax: GNU,
  options: [...flags('p|parents', 'v|verbose', 'Z'), opt('m|mode='), opt('context[=]'), ...GNU_STANDARD],
  plan: (_options, operands) => ({ kinds: every('write-path', operands) }),
};

export const TOUCH: ProgramModel = {
  name: 'touch',
  syntax: GNU,
  options: [
    ...flags('a', 'c|no-create', 'f', 'h|no-dereference', 'm'),
    opt('d|date=', { value: 'inert' }),
    opt('r|reference=', { value: 'read-path' }),
    opt('t='),
    opt('time='),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('write-path', operands) }),
};
