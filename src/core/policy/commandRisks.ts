// What a shell command risks, from its parsed words (R-POL-10): privilege
// escalation, container mounts of the host, force pushes, project code,
// network use, deletes — each a finding for core/approval/approvalRisk.ts to level.
// Recursive deletes are planned as paths, judged where they land by decidePlan.
// Details name programs and options from these tables, never an operand.
import type { ActionPlan } from './actionPlan.js';
import { NETWORK_INTO_INTERPRETER, type PlannedDelete, type RiskSignal } from '../approval/approvalRisk.js';
import { commandBaseName, type ShellWord, type SimpleCommand } from './shellCommand.js';
import { unwrapCommand } from './shellWrappers.js';

/** Commands that delete or overwrite what they are given. */
const DESTRUCTIVE_COMMANDS: ReadonlySet<string> = new Set(['rm', 'rmdir', 'unlink', 'shred', 'dd', 'truncate', 'wipefs', 'mkfs', 'fdisk', 'sfdisk', 'parted', 'mkswap']);
/** Subcommands that throw work away. */
const DESTRUCTIVE_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  git: ['clean', 'reset', 'restore', 'filter-branch', 'filter-repo'],
  docker: ['rm', 'rmi'],
  kubectl: ['delete', 'drain'],
  terraform: ['destroy'],
};
/** Commands whose work is talking to other machines. */
const NETWORK_COMMANDS: ReadonlySet<string> = new Set(['curl', 'wget', 'ssh', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ftp', 'http', 'https', 'xh', 'gh', 'aria2c']);
/** Subcommands that reach a remote (a registry, a git remote, a cluster). */
const NETWORK_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  git: ['push', 'pull', 'fetch', 'clone', 'ls-remote', 'submodule'],
  npm: ['install', 'i', 'ci', 'add', 'publish', 'update', 'exec'],
  npx: ['*'],
  pnpm: ['install', 'i', 'add', 'publish', 'update', 'dlx'],
  yarn: ['install', 'add', 'publish', 'dlx'],
  pip: ['install', 'download'],
  pip3: ['install', 'download'],
  cargo: ['install', 'publish', 'fetch'],
  docker: ['pull', 'push', 'login'],
  kubectl: ['*'],
};
/** Programs that run as another user, usually root (R-POL-10). */
const PRIVILEGE_COMMANDS: ReadonlySet<string> = new Set(['sudo', 'sudoedit', 'doas', 'su', 'pkexec', 'run0', 'ksu']);
/** Programs that run what they read as code: network data into one of these is high. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  'sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'fish', 'csh', 'tcsh',
  'python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'luajit',
  'Rscript', 'tclsh', 'pwsh', 'powershell', 'osascript', 'eval', 'source', '.',
]);
/** Subcommands of build tools and package managers that run the project's own code (R-POL-10: elevated). */
const PROJECT_CODE_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  npm: ['run', 'run-script', 'rum', 'urn', 'test', 't', 'tst', 'start', 'stop', 'restart', 'exec', 'x', 'install', 'i', 'ci', 'install-test', 'it', 'rebuild'],
  pnpm: ['run', 'test', 't', 'start', 'exec', 'dlx', 'install', 'i', 'add', 'rebuild'],
  yarn: ['run', 'test', 'start', 'exec', 'dlx', 'node', 'install', 'add'],
  bun: ['run', 'test', 'x', 'install', 'i', 'add'],
  cargo: ['run', 'r', 'test', 't', 'bench', 'build', 'b', 'check', 'c', 'clippy', 'install'],
  go: ['run', 'test', 'generate'],
  deno: ['run', 'task', 'test', 'eval'],
  dotnet: ['run', 'test', 'build'],
  swift: ['run', 'test', 'build'],
  bazel: ['run', 'test', 'build'],
  bundle: ['exec'],
  poetry: ['run'],
  uv: ['run'],
  pipenv: ['run'],
  pdm: ['run'],
  hatch: ['run'],
  composer: ['run', 'run-script', 'install'],
  mix: ['run', 'test'],
  'pre-commit': ['run'],
};
/** Programs that run the project's code whatever their arguments: builds, task runners, test runners. */
const PROJECT_CODE_COMMANDS: ReadonlySet<string> = new Set([
  'make', 'gmake', 'bmake', 'ninja', 'just', 'task', 'rake', 'cmake', 'meson', 'scons', 'gradle', 'gradlew', 'mvn', 'mvnw', 'ant', 'sbt',
  'pytest', 'py.test', 'tox', 'nox', 'jest', 'vitest', 'mocha', 'rspec', 'tsx', 'ts-node', 'npx', 'pnpx', 'bunx', 'rails',
]);
/** Interpreters that run a script operand, and the options that give them code inline. */
const SCRIPT_INTERPRETERS: Readonly<Record<string, string>> = {
  python: '-c', python2: '-c', python3: '-c', pypy: '-c', pypy3: '-c', node: '-e', nodejs: '-e', perl: '-e', ruby: '-e', php: '-r',
  sh: '', bash: '', dash: '', zsh: '', ksh: '', fish: '-c', lua: '-e', Rscript: '-e', source: '', '.': '',
};
/** Directories whose programs are the system's, not the project's. */
const SYSTEM_DIRS = ['/usr/', '/bin/', '/sbin/', '/opt/', '/nix/', '/snap/'];
const CONTAINER_RUNTIMES: ReadonlySet<string> = new Set(['docker', 'podman', 'nerdctl']);
/** `docker run` options that take a value (short letters, long names): the image is the first word after them. */
const CONTAINER_SHORT_VALUES = 'acehlmpuvw';
const CONTAINER_LONG_VALUES: ReadonlySet<string> = new Set([
  'add-host', 'annotation', 'attach', 'blkio-weight', 'cap-add', 'cap-drop', 'cgroup-parent', 'cgroupns', 'cidfile', 'cpu-period', 'cpu-quota',
  'cpu-shares', 'cpus', 'cpuset-cpus', 'cpuset-mems', 'device', 'device-cgroup-rule', 'dns', 'dns-option', 'dns-search', 'domainname',
  'entrypoint', 'env', 'env-file', 'expose', 'gpus', 'group-add', 'health-cmd', 'health-interval', 'health-retries', 'health-start-period',
  'health-timeout', 'hostname', 'ip', 'ip6', 'ipc', 'isolation', 'label', 'label-file', 'link', 'log-driver', 'log-opt', 'mac-address', 'memory',
  'memory-reservation', 'memory-swap', 'mount', 'name', 'network', 'net', 'network-alias', 'pid', 'platform', 'publish', 'pull', 'restart',
  'runtime', 'security-opt', 'shm-size', 'stop-signal', 'stop-timeout', 'storage-opt', 'sysctl', 'tmpfs', 'ulimit', 'user', 'userns', 'uts',
  'volume', 'volumes-from', 'workdir',
]);
/** git's global options that take the next word as their value. */
const GIT_GLOBAL_VALUES: ReadonlySet<string> = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);

const textOf = (word: ShellWord | undefined): string | undefined => (word !== undefined && word.static ? word.text : undefined);

/** The first word after the command name that is not an option. */
function subcommandOf(command: SimpleCommand): string | undefined {
  for (const word of command.words.slice(1)) {
    if (!word.static) return undefined;
    if (!word.text.startsWith('-')) return word.text;
  }
  return undefined;
}

function hasWord(command: SimpleCommand, ...texts: string[]): boolean {
  return command.words.some((word) => word.static && texts.includes(word.text));
}

/** True when `text` is `--NAME` or `--NAME=…` for a prefix of `full` at least `min` letters long (getopt_long's abbreviations). */
function longOption(text: string, full: string, min: number): boolean {
  if (!text.startsWith('--')) return false;
  const name = text.slice(2).split('=')[0] ?? '';
  return name.length >= min && full.startsWith(name);
}

/** The index of git's subcommand, past its global options (`git -C dir push`). */
function gitSubcommandIndex(words: readonly ShellWord[]): number | undefined {
  for (let i = 1; i < words.length; i += 1) {
    const text = textOf(words[i]);
    if (text === undefined) return undefined;
    if (GIT_GLOBAL_VALUES.has(text)) i += 1;
    else if (!text.startsWith('-')) return i;
  }
  return undefined;
}

/** Force pushes and pushes that delete or overwrite remote refs (R-POL-10: high). */
function gitPushRisks(words: readonly ShellWord[]): RiskSignal[] {
  const sub = gitSubcommandIndex(words);
  if (sub === undefined || textOf(words[sub]) !== 'push') return [];
  const signals: RiskSignal[] = [];
  let operands = false;
  for (const word of words.slice(sub + 1)) {
    const text = textOf(word);
    if (text === undefined) continue;
    if (operands || text === '--' || !text.startsWith('-')) {
      if (text === '--') {
        operands = true;
        continue;
      }
      if (text.startsWith('+')) signals.push({ flag: 'force push', detail: 'a +refspec' });
      else if (text.startsWith(':') && text.length > 1) signals.push({ flag: 'remote history rewrite', detail: 'a :ref refspec deletes' });
      continue;
    }
    if (/^-[vqnufd46]+$/.test(text)) {
      if (text.includes('f')) signals.push({ flag: 'force push', detail: 'git push -f' });
      if (text.includes('d')) signals.push({ flag: 'remote history rewrite', detail: 'git push --delete' });
    } else if (longOption(text, 'force-with-lease', 3) || longOption(text, 'force-if-includes', 3) || longOption(text, 'force', 3)) {
      signals.push({ flag: 'force push', detail: 'git push --force' });
    } else if (longOption(text, 'mirror', 2)) signals.push({ flag: 'remote history rewrite', detail: 'git push --mirror' });
    else if (longOption(text, 'delete', 2)) signals.push({ flag: 'remote history rewrite', detail: 'git push --delete' });
    else if (longOption(text, 'prune', 3)) signals.push({ flag: 'remote history rewrite', detail: 'git push --prune' });
  }
  return signals;
}

/** Whether a mount source is the host's root, the home directory (or a directory holding it), or the runtime's socket. */
function hostMountOf(source: string, home: string): string | undefined {
  let path = source;
  if (path === '~' || path.startsWith('~/')) path = `${home}${path.slice(1)}`;
  else if (/^\$(\{HOME\}|HOME)(\/|$)/.test(path)) path = path.replace(/^\$(\{HOME\}|HOME)/, home);
  if (!path.startsWith('/')) return undefined;
  const normal = `/${path.split('/').filter((part) => part !== '' && part !== '.').join('/')}`;
  if (normal === '/') return '/';
  const homeNormal = `/${home.split('/').filter((part) => part !== '').join('/')}`;
  if (normal === homeNormal || homeNormal.startsWith(`${normal}/`)) return '$HOME';
  if (/\/(docker|podman)\.sock$/.test(normal)) return 'its socket';
  return undefined;
}

/** `SRC:DST[:opts]` of `-v`, or `type=bind,source=SRC,…` of `--mount`: the host side. */
function mountSource(option: 'volume' | 'mount', value: string): string {
  if (option === 'volume') return value.split(':')[0] ?? '';
  for (const field of value.split(',')) {
    const [key, ...rest] = field.split('=');
    if (key === 'source' || key === 'src') return rest.join('=');
  }
  return '';
}

/** `docker|podman|nerdctl run|create|exec` options up to the image: host mounts and privileged containers. */
function containerRisks(name: string, words: readonly ShellWord[], home: string): RiskSignal[] {
  let start = 1;
  if (textOf(words[1]) === 'container') start = 2;
  const sub = textOf(words[start]);
  if (sub !== 'run' && sub !== 'create' && sub !== 'exec') return [];
  const signals: RiskSignal[] = [];
  const consider = (option: string, value: ShellWord | undefined): void => {
    const text = value === undefined ? undefined : value.static ? value.text : value.text.replace(/"/g, '');
    if ((option === 'v' || option === 'volume' || option === 'mount') && text !== undefined) {
      const host = hostMountOf(mountSource(option === 'mount' ? 'mount' : 'volume', text), home);
      if (host !== undefined) signals.push({ flag: 'container host mount', detail: `${name} mounts ${host}` });
    }
    if (option === 'privileged' && (text === undefined || text === 'true')) signals.push({ flag: 'privileged container', detail: `${name} --privileged` });
    if (option === 'cap-add' && text !== undefined && /^(CAP_)?(ALL|SYS_ADMIN)$/i.test(text)) signals.push({ flag: 'privileged container', detail: `${name} --cap-add ${text.toUpperCase().replace(/^CAP_/, '')}` });
    if (option === 'pid' && text === 'host') signals.push({ flag: 'privileged container', detail: `${name} --pid host` });
  };
  for (let i = start + 1; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    // An option with a variable in it (`--volume=$HOME:/h`) is still read as an option, its text as written.
    const text = word.static ? word.text : word.text.replace(/^"(-[^"]*)"/, '$1');
    if (text === '--' || !text.startsWith('-') || text === '-') break; // the image: what follows is the container's command
    if (text.startsWith('--')) {
      const [long = '', ...value] = text.slice(2).split('=');
      if (value.length > 0) consider(long, { text: value.join('='), static: word.static });
      else if (CONTAINER_LONG_VALUES.has(long)) {
        consider(long, words[i + 1]);
        i += 1;
      } else consider(long, undefined);
      continue;
    }
    for (let j = 1; j < text.length; j += 1) {
      const letter = text[j] as string;
      if (!CONTAINER_SHORT_VALUES.includes(letter)) continue;
      const rest = text.slice(j + 1);
      if (rest !== '') consider(letter, { text: rest, static: word.static });
      else {
        consider(letter, words[i + 1]);
        i += 1;
      }
      break;
    }
  }
  return signals;
}

/** Whether a command is only asking for its version or help (`node --version`): that runs nothing of the project's. */
function onlyAsks(command: SimpleCommand): boolean {
  return command.words.length === 2 && ['--version', '-V', '-v', '--help', '-h', 'version', 'help'].includes(textOf(command.words[1]) ?? '');
}

/** Running the project's own code (R-POL-10: elevated): scripts, package scripts, builds and tests. */
function projectCodeRisks(name: string, command: SimpleCommand): RiskSignal[] {
  const first = command.words[0] as ShellWord;
  if (first.static && first.text.includes('/') && !SYSTEM_DIRS.some((dir) => first.text.startsWith(dir))) return [{ flag: 'runs project code', detail: 'a local program' }];
  if (onlyAsks(command)) return [];
  if (PROJECT_CODE_COMMANDS.has(name)) return [{ flag: 'runs project code', detail: name }];
  const sub = subcommandOf(command);
  const subs = PROJECT_CODE_SUBCOMMANDS[name];
  if (subs !== undefined && ((sub !== undefined && subs.includes(sub)) || (name === 'yarn' && sub === undefined))) {
    return [{ flag: 'runs project code', detail: sub === undefined ? name : `${name} ${sub}` }];
  }
  const inline = SCRIPT_INTERPRETERS[name];
  if (inline === undefined) return [];
  for (const word of command.words.slice(1)) {
    const text = textOf(word);
    if (text === undefined) return [{ flag: 'runs project code', detail: `${name} script` }];
    if (inline !== '' && (text === inline || text === '-m' || text === '--eval')) return [{ flag: 'runs project code', detail: `${name} ${text}` }];
    // `bash -c` is parsed again and judged command by command; its string is not project code.
    if (/^-[A-Za-z]*c/.test(text) && inline === '') return [];
    if (!text.startsWith('-')) return [{ flag: 'runs project code', detail: `${name} script` }];
  }
  return [];
}

/** What one simple command risks, from its parsed words; `home` resolves `~` and `$HOME` in container mounts. */
export function commandRisks(command: SimpleCommand, home = ''): RiskSignal[] {
  const name = commandBaseName(command.words[0]);
  if (name === undefined) return [];
  const signals: RiskSignal[] = [];
  const sub = subcommandOf(command);
  const listed = (table: Readonly<Record<string, readonly string[]>>): boolean => {
    const subs = table[name];
    return subs !== undefined && (subs.includes('*') || (sub !== undefined && subs.includes(sub)));
  };
  const program = name.startsWith('mkfs.') ? 'mkfs' : name;
  if (DESTRUCTIVE_COMMANDS.has(program) || listed(DESTRUCTIVE_SUBCOMMANDS)) signals.push({ flag: 'destructive', detail: DESTRUCTIVE_COMMANDS.has(program) ? program : `${name} ${sub ?? ''}` });
  if (name === 'find' && hasWord(command, '-delete')) signals.push({ flag: 'destructive', detail: 'find -delete' });
  if (NETWORK_COMMANDS.has(name)) signals.push({ flag: 'network', detail: name });
  else if (listed(NETWORK_SUBCOMMANDS)) signals.push({ flag: 'network', detail: sub === undefined || !(NETWORK_SUBCOMMANDS[name] ?? []).includes(sub) ? name : `${name} ${sub}` });
  if (PRIVILEGE_COMMANDS.has(name)) signals.push({ flag: 'privilege escalation', detail: name });
  if (name === 'git') signals.push(...gitPushRisks(command.words));
  if (CONTAINER_RUNTIMES.has(name)) signals.push(...containerRisks(name, command.words, home));
  signals.push(...projectCodeRisks(name, command));
  return signals;
}

/** The operands a command deletes recursively (`rm -r`, `find DIR -delete`, `find DIR -exec rm`), each with what deletes it. */
export function recursiveDeleteOperands(command: SimpleCommand): { word: ShellWord; via: string }[] {
  const name = commandBaseName(command.words[0]);
  const words = command.words.slice(1);
  if (name === 'rm') {
    let recursive = false;
    let ended = false;
    const operands: ShellWord[] = [];
    for (const word of words) {
      const text = textOf(word);
      if (ended || text === undefined || !text.startsWith('-') || text === '-') operands.push(word);
      else if (text === '--') ended = true;
      else if (text.startsWith('--')) recursive ||= longOption(text, 'recursive', 1);
      else recursive ||= /[rR]/.test(text);
    }
    return recursive ? operands.map((word) => ({ word, via: 'rm -r' })) : [];
  }
  // find deletes beneath its starting directories with -delete, or with rm run on each file it finds.
  const findRm = words.findIndex((word, i) => ['-exec', '-execdir', '-ok', '-okdir'].includes(textOf(word) ?? '') && commandBaseName(words[i + 1]) === 'rm');
  if (name === 'find' && (hasWord(command, '-delete') || findRm >= 0)) {
    const via = hasWord(command, '-delete') ? 'find -delete' : 'find -exec rm';
    let i = 0;
    while (i < words.length && /^-[HLP]$|^-O[0-9]$|^-D$/.test(textOf(words[i]) ?? '')) i += textOf(words[i]) === '-D' ? 2 : 1;
    const dirs: ShellWord[] = [];
    for (; i < words.length; i += 1) {
      const text = textOf(words[i]);
      if (text !== undefined && (text.startsWith('-') || text === '(' || text === '!')) break;
      dirs.push(words[i] as ShellWord);
    }
    return (dirs.length === 0 ? [{ text: '.', static: true }] : dirs).map((word) => ({ word, via }));
  }
  return [];
}

/** The innermost program a command runs through wrappers (`sudo env bash` → `bash`). */
function innermostName(words: readonly ShellWord[]): string | undefined {
  let current = words;
  for (let depth = 0; depth < 8; depth += 1) {
    const inner = unwrapCommand(current)?.inner;
    if (inner === undefined || inner.words.length === 0) break;
    current = inner.words;
  }
  return commandBaseName(current[0]);
}

const interprets = (command: SimpleCommand | undefined): boolean => {
  if (command === undefined) return false;
  const name = innermostName(command.words);
  return name !== undefined && (INTERPRETERS.has(name) || /^python[0-9.]*$/.test(name));
};

const fetches = (command: SimpleCommand): boolean => commandRisks(command).some((signal) => signal.flag === 'network');

/**
 * Network data into a shell or interpreter (R-POL-10: high), across the
 * commands of one line: a fetch in an earlier stage of a pipeline whose later
 * stage interprets, or a fetch inside a substitution an interpreter runs (or that a later stage pipes into one)
 * (`bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget -O- …)"`).
 */
export function lineRisks(commands: readonly SimpleCommand[]): RiskSignal[] {
  const signals: RiskSignal[] = [];
  for (const command of commands) {
    if (!fetches(command)) continue;
    const from = commandBaseName(command.words[0]) ?? 'a fetch';
    // What carries the fetched data: the fetch itself, then each command whose substitution holds it (`echo $(curl …) | sh`).
    let carrier: SimpleCommand | undefined = command;
    for (let depth = 0; carrier !== undefined && depth < 16; depth += 1) {
      if (carrier !== command && interprets(carrier)) {
        signals.push({ flag: NETWORK_INTO_INTERPRETER, detail: `${from} into ${innermostName(carrier.words) ?? 'a shell'}` });
        break;
      }
      const pipe: SimpleCommand['pipeline'] = carrier.pipeline;
      const later = pipe === undefined ? undefined : commands.find((other) => other.pipeline?.id === pipe.id && other.pipeline.stage > pipe.stage && interprets(other));
      if (later !== undefined) {
        signals.push({ flag: NETWORK_INTO_INTERPRETER, detail: `${from} | ${innermostName(later.words) ?? 'a shell'}` });
        break;
      }
      carrier = carrier.inside === undefined ? undefined : commands[carrier.inside];
    }
  }
  return signals;
}

function expandTilde(word: ShellWord, home: string): string {
  if (word.tilde !== true) return word.text;
  return word.text === '~' ? home : `${home}${word.text.slice(1)}`;
}

/**
 * Adds what one command risks to the plan: its findings, and each recursive
 * delete's operand as a path to resolve (judged in decidePlan by where it
 * lands; never a policy input). `bases` are the directories relative paths
 * may be relative to (undefined after a `cd` that is not statically known).
 */
export function planCommandRisks(plan: ActionPlan, command: SimpleCommand, bases: readonly string[] | undefined, home: string): void {
  const signals = commandRisks(command, home);
  if (signals.length > 0) (plan.risks ??= []).push(...signals);
  for (const { word, via } of recursiveDeleteOperands(command)) {
    const planned: PlannedDelete = { via };
    const text = word.static ? expandTilde(word, home) : undefined;
    if (text !== undefined && (text.startsWith('/') || bases !== undefined)) {
      planned.request = plan.requests.length;
      plan.requests.push({ text, bases: text.startsWith('/') ? [] : [...(bases ?? [])] });
    }
    (plan.deletes ??= []).push(planned);
  }
}

/** Adds the findings that span commands of a line (network into an interpreter) to the plan. */
export function planLineRisks(plan: ActionPlan, commands: readonly SimpleCommand[]): void {
  const signals = lineRisks(commands);
  if (signals.length > 0) (plan.risks ??= []).push(...signals);
}
