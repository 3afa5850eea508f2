// basename and dirname only transform the text of their operands; realpath
// resolves paths against the file system (a metadata read). GNU coreutils 9.1.
import { every, flags, GNU, GNU_STANDARD, opt, type ProgramModel } from './programModel.js';

export const BASENAME: ProgramModel = {
  name: 'basename',
  syntax: GNU,
  options: [...flags('a|multiple', 'z|zero'), opt('s|suffix=', { value: 'inert' }), ...GNU_STANDARD],
  plan: (_options, operands) => ({ kinds: every('inert', operands) }),
};

export const DIRNAME: ProgramModel = {
  name: 'dirname',
  syntax: GNU,
  options: [...flags('z|zero'), ...GNU_STANDARD],
  plan: (_options, operands) => ({ kinds: every('inert', operands) }),
};

export const REALPATH: ProgramModel = {
  name: 'realpath',
  syntax: GNU,
  options: [
    ...flags('e|canonicalize-existing', 'm|canonicalize-missing', 'L|logical', 'P|physical', 'q|quiet', 's|strip|no-symlinks', 'z|zero'),
    opt('relative-to=', { value: 'read-path' }),
    opt('relative-base=', { value: 'read-path' }),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};
