// Wrappers as a layer of their own (R-SH-1): time (GNU time), timeout, nice,
// nohup and stdbuf. Each model judges only the wrapper's own options and
// operands; the command it runs is extracted by the parser and judged apart.
import { flags, GNU_STANDARD, GNU_STOP, opt, type ProgramModel } from './programModel.js';

const noOperands: ProgramModel['plan'] = () => ({ kinds: [] });

export const TIME: ProgramModel = {
  name: 'time',
  syntax: GNU_STOP,
  operandsBeforeCommand: 0,
  options: [...flags('a|append', 'p|portability', 'q|quiet', 'v|verbose', 'V|version', 'help'), opt('o|output=', { value: 'write-path' }), opt('f|format=', { value: 'inert' })],
  plan: noOperands,
};

export const TIMEOUT: ProgramModel = {
  name: 'timeout',
  syntax: GNU_STOP,
  operandsBeforeCommand: 1,
  options: [...flags('preserve-status', 'foreground', 'v|verbose'), opt('k|kill-after='), opt('s|signal='), ...GNU_STANDARD],
  // DURATION, then the command.
  plan: (_options, operands) => ({ kinds: operands.map(() => 'literal') }),
};

export const NICE: ProgramModel = {
  name: 'nice',
  syntax: GNU_STOP,
  operandsBeforeCommand: 0,
  // `nice -5 cmd` is the obsolete `nice -n 5 cmd`.
  options: [opt('0|1|2|3|4|5|6|7|8|9'), opt('n|adjustment='), ...GNU_STANDARD],
  plan: noOperands,
};

export const NOHUP: ProgramModel = {
  name: 'nohup',
  syntax: GNU_STOP,
  operandsBeforeCommand: 0,
  options: GNU_STANDARD,
  // When its output is a terminal, nohup appends it to nohup.out in the cwd.
  plan: () => ({ kinds: [], extra: { writes: [{ text: 'nohup.out', static: true }] } }),
};

export const STDBUF: ProgramModel = {
  name: 'stdbuf',
  syntax: GNU_STOP,
  operandsBeforeCommand: 0,
  options: [opt('i|input='), opt('o|output='), opt('e|error='), ...GNU_STANDARD],
  plan: noOperands,
};
