// Programs that print facts about the system and its processes: id, nproc,
// df (GNU coreutils 9.1), hostname (Debian's hostname 3.23), pgrep and uptime
// (procps-ng 4.0), and printenv. Refused: every form of hostname that sets
// the host name (an operand, -F, -b); pgrep -a, which prints other processes'
// command lines (/proc/*/cmdline is a credential location: a command line
// may carry a token); and printenv of anything but a named variable that
// holds no secret — the agent's environment holds its API keys.
import { INERT_VARIABLES } from '../inertVariables.js';
import { every, flags, GNU, GNU_STANDARD, opt, refused, type ProgramModel } from './programModel.js';

export const ID: ProgramModel = {
  name: 'id',
  syntax: GNU,
  options: [...flags('a', 'Z|context', 'g|group', 'G|groups', 'n|name', 'r|real', 'u|user', 'z|zero'), ...GNU_STANDARD],
  // USER names: looked up in the user database, printed.
  plan: (_options, operands) => ({ kinds: every('inert', operands) }),
};

export const NPROC: ProgramModel = { name: 'nproc', syntax: GNU, options: [opt('all'), opt('ignore='), ...GNU_STANDARD], plan: () => ({ kinds: [] }) };

export const DF: ProgramModel = {
  name: 'df',
  syntax: GNU,
  options: [
    ...flags('a|all', 'h|human-readable', 'H|si', 'i|inodes', 'k', 'l|local', 'no-sync', 'P|portability', 'sync', 'total', 'T|print-type', 'v'),
    opt('B|block-size='),
    opt('output[=]'),
    opt('t|type='),
    opt('x|exclude-type='),
    ...GNU_STANDARD,
  ],
  // Each FILE names the file system it is on: a metadata read.
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};

const SETS_HOSTNAME = 'sets the host name';

export const HOSTNAME: ProgramModel = {
  name: 'hostname',
  syntax: GNU,
  options: [
    ...flags('a|alias', 'A|all-fqdns', 'd|domain', 'f|fqdn|long', 'i|ip-address', 'I|all-ip-addresses', 's|short', 'y|yp|nis', 'V|version', 'h|help'),
    opt('b|boot', { refuse: `${SETS_HOSTNAME} (to a default when none is set)` }),
    opt('F|file=', { refuse: `${SETS_HOSTNAME} from a file` }),
  ],
  plan: (_options, operands) => {
    const first = operands[0];
    if (first === undefined) return { kinds: [] };
    return { kinds: [], refused: { reason: `the operand ${JSON.stringify(first.word.text)} ${SETS_HOSTNAME}` } };
  },
};

export const PGREP: ProgramModel = {
  name: 'pgrep',
  syntax: GNU,
  options: [
    ...flags('l|list-name', 'v|inverse', 'w|lightweight', 'c|count', 'f|full', 'i|ignore-case', 'n|newest', 'o|oldest', 'x|exact', 'L|logpidfile', 'A|ignore-ancestors', 'h|help', 'V|version'),
    opt('a|list-full', { refuse: "prints the full command line of every process it finds, and a command line may carry a token (/proc/*/cmdline is a credential location)" }),
    opt('d|delimiter=', { value: 'inert' }),
    opt('F|pidfile=', { value: 'read-path' }),
    ...['g|pgroup=', 'G|group=', 'O|older=', 'P|parent=', 's|session=', 't|terminal=', 'u|euid=', 'U|uid=', 'r|runstates=', 'cgroup=', 'ns=', 'nslist='].map((names) => opt(names)),
    // pkill's options, which pgrep's parser knows too (so they count for abbreviations).
    ...refused('is an option of pkill, which signals processes', 'signal=', 'queue=', 'echo'),
  ],
  // One pattern, matched against process names (or, with -f, command lines; only the PIDs are printed).
  plan: (_options, operands) => ({ kinds: operands.slice(0, 1).map(() => 'pattern' as const) }),
};

export const UPTIME: ProgramModel = { name: 'uptime', syntax: GNU, options: flags('p|pretty', 's|since', 'h|help', 'V|version'), plan: () => ({ kinds: [] }) };

/** Variables printenv may print: the inert list (R-SH-3) and the session's own names; none holds a secret. */
const PRINTABLE = new Set(['HOME', 'PATH', 'USER', 'SHELL', 'PWD', 'LANG', 'TERM']);

export function printableVariable(name: string): boolean {
  return PRINTABLE.has(name) || INERT_VARIABLES.some((v) => (typeof v.name === 'string' ? v.name === name : v.name.test(name)));
}

export const PRINTENV: ProgramModel = {
  name: 'printenv',
  syntax: GNU,
  options: [opt('0|null'), ...GNU_STANDARD],
  plan: (options, operands) => {
    if (operands.length === 0) {
      if (options.has('--help', '--version')) return { kinds: [] };
      return { kinds: [], refused: { reason: "without a name printenv prints the whole environment, which holds the agent's API keys and tokens" } };
    }
    for (const { word } of operands) {
      if (!word.static) return { kinds: [], refused: { reason: `the variable name ${JSON.stringify(word.text)} is not statically known` } };
      if (!printableVariable(word.text)) {
        return { kinds: [], refused: { reason: `${word.text} is not a variable known to hold no secret (the environment holds the agent's API keys and tokens)` } };
      }
    }
    return { kinds: every('literal', operands) };
  },
};

export const SYSTEM_TOOLS: readonly ProgramModel[] = [ID, NPROC, DF, HOSTNAME, PGREP, UPTIME, PRINTENV];
