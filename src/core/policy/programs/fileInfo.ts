// file (5.44) and stat (GNU coreutils 9.1): they read files (or their
// metadata) and print what they find. `file` can also compile a magic file,
// run decompressors, leave its sandbox and reset access times: those are refused.
import type { ShellWord } from '../shellCommand.js';
import { every, flags, GNU, GNU_STANDARD, opt, refused, WHY, type ProgramModel } from './programModel.js';

/** `-m a:b` reads a and b; only the first can start with a `~` the shell expanded. */
function magicFiles(list: ShellWord): ShellWord[] {
  return list.text
    .split(':')
    .map((text, i): ShellWord => (i === 0 ? { ...list, text } : { text, static: true }))
    .filter((w) => w.text !== '');
}

export const FILE: ProgramModel = {
  name: 'file',
  syntax: GNU,
  options: [
    ...flags(
      'apple', 'b|brief', 'c|checking-printout', 'd|debug', 'E', 'extension', 'h|no-dereference', 'i|mime', 'mime-type', 'mime-encoding',
      'k|keep-going', 'l|list', 'L|dereference', 'n|no-buffer', 'N|no-pad', '0|print0', 'r|raw', 's|special-files', 'v|version',
    ),
    opt('e|exclude='),
    opt('exclude-quiet='),
    opt('F|separator=', { value: 'inert' }),
    // A colon-separated list of magic files: the plan reads each.
    opt('m|magic-file='),
    opt('P|parameter='),
    opt('C|compile', { refuse: 'writes a compiled magic file (magic.mgc)' }),
    opt('f|files-from=', { refuse: WHY.fileList }),
    ...refused('runs decompression programs on the files', 'z|uncompress', 'Z|uncompress-noreport'),
    opt('S|no-sandbox', { refuse: 'turns off the sandbox that file parses untrusted data in' }),
    opt('p|preserve-date', { refuse: 'resets the access times of the files it reads (a write)' }),
    opt('help'),
  ],
  plan: (options, operands) => ({ kinds: every('read-path', operands), extra: { reads: options.values('--magic-file').flatMap(magicFiles) } }),
};

export const STAT: ProgramModel = {
  name: 'stat',
  syntax: GNU,
  options: [
    ...flags('L|dereference', 'f|file-system', 't|terse'),
    opt('cached='),
    opt('c|format=', { value: 'inert' }),
    opt('printf=', { value: 'inert' }),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};
