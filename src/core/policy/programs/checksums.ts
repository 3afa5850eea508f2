// Checksum programs of GNU coreutils 9.1: md5sum, sha1sum, sha224sum,
// sha256sum, sha384sum, sha512sum, b2sum and cksum. Each reads its file
// operands and prints their digests. With -c/--check an operand is a list of
// digests and file names, and the program then reads the files named in it:
// those are not statically known, so -c is refused.
import { every, flags, GNU, GNU_STANDARD, opt, type OptionSpec, type ProgramModel } from './programModel.js';

const CHECK = opt('c|check', { refuse: 'reads the files named inside its operands, so what it reads is not statically known' });

/** The options only `--check` uses; harmless without it. */
const VERIFY = flags('ignore-missing', 'quiet', 'status', 'strict', 'w|warn');

function digest(name: string, extra: readonly OptionSpec[] = []): ProgramModel {
  return {
    name,
    syntax: GNU,
    options: [...flags('b|binary', 'tag', 't|text', 'z|zero'), CHECK, ...VERIFY, ...extra, ...GNU_STANDARD],
    plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
  };
}

export const MD5SUM = digest('md5sum');
export const SHA1SUM = digest('sha1sum');
export const SHA224SUM = digest('sha224sum');
export const SHA256SUM = digest('sha256sum');
export const SHA384SUM = digest('sha384sum');
export const SHA512SUM = digest('sha512sum');
export const B2SUM = digest('b2sum', [opt('l|length=')]);

export const CKSUM: ProgramModel = {
  name: 'cksum',
  syntax: GNU,
  options: [opt('a|algorithm='), CHECK, opt('l|length='), ...flags('tag', 'untagged', 'z|zero', 'debug'), ...VERIFY, ...GNU_STANDARD],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};

export const CHECKSUMS: readonly ProgramModel[] = [MD5SUM, SHA1SUM, SHA224SUM, SHA256SUM, SHA384SUM, SHA512SUM, B2SUM, CKSUM];
