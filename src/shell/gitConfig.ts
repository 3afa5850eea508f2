// Git's config syntax and the keys in it that make git run a command (R-SH-9).
// The parser follows git's own (config.c, git_parse_source) character by
// character, so it names every variable git would see; what it cannot parse,
// git refuses too, and the caller treats it as not known.

/** One variable as git names it: section (and legacy `[a.b]` subsection) and key lower-cased, `[s "Sub"]` kept as written. */
export interface GitConfigEntry {
  key: string;
  /** Undefined for a bare `key` line, which git reads as boolean true. */
  value: string | undefined;
  /** 1-based line where the variable ends. */
  line: number;
}

export type GitConfigParse = { entries: GitConfigEntry[]; error?: undefined } | { entries?: undefined; error: string };

// git's sane_ctype: ASCII only, and isspace is exactly these four.
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isAlpha = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isKeyChar = (c: string): boolean => isAlpha(c) || (c >= '0' && c <= '9') || c === '-';

/** A cursor over the text with git's get_next_char: CRLF is one `\n`, and the end reads as `\n` with `eof` set. */
class ConfigSource {
  private pos = 0;
  line = 1;
  eof = false;
  constructor(private readonly text: string) {}

  next(): string {
    let c = this.text[this.pos];
    if (c === undefined) {
      // git counts a line at every read past the end; its error lines depend on it.
      this.eof = true;
      this.line += 1;
      return '\n';
    }
    this.pos += 1;
    if (c === '\r' && this.text[this.pos] === '\n') {
      this.pos += 1;
      c = '\n';
    }
    if (c === '\n') this.line += 1;
    return c;
  }
}

/**
 * Parses one config file's text (decoded byte for byte, e.g. as latin1) the
 * way git does. An error names the line, as git's "bad config line N" does;
 * a NUL byte is an error too, because git would cut the value there and this
 * parser would not.
 */
export function parseGitConfig(text: string): GitConfigParse {
  if (text.includes('\0')) return { error: 'it holds a NUL byte' };
  const source = new ConfigSource(text);
  const entries: GitConfigEntry[] = [];
  let section = '';
  let comment = false;
  let bom = text.startsWith('\u00ef\u00bb\u00bf') ? 3 : 0;
  for (;;) {
    const c = source.next();
    if (bom > 0) {
      bom -= 1;
      continue;
    }
    if (c === '\n') {
      if (source.eof) return { entries };
      comment = false;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === '#' || c === ';') {
      comment = true;
      continue;
    }
    if (c === '[') {
      const header = readSectionHeader(source);
      if (header === undefined || header === '') break;
      section = `${header}.`;
      continue;
    }
    if (!isAlpha(c)) break;
    const entry = readVariable(source, section + c.toLowerCase());
    if (entry === undefined) break;
    entries.push(entry);
  }
  return { error: `bad config line ${source.line}` };
}

/** After `[`: `name]` (lower-cased, dots allowed: the legacy subsection) or `name "sub"]` (sub as written, `\x` is x). */
function readSectionHeader(source: ConfigSource): string | undefined {
  let name = '';
  let c: string;
  for (;;) {
    c = source.next();
    if (source.eof) return undefined;
    if (c === ']') return name;
    if (isSpace(c)) break;
    if (!isKeyChar(c) && c !== '.') return undefined;
    name += c.toLowerCase();
  }
  // git's error_incomplete_line: the error is on the line the newline ended.
  const incomplete = (): undefined => {
    source.line -= 1;
    return undefined;
  };
  do {
    if (c === '\n') return incomplete();
    c = source.next();
  } while (isSpace(c));
  if (c !== '"') return undefined;
  name += '.';
  for (;;) {
    c = source.next();
    if (c === '\n') return incomplete();
    if (c === '"') break;
    if (c === '\\') {
      c = source.next();
      if (c === '\n') return incomplete();
    }
    name += c;
  }
  return source.next() === ']' ? name : undefined;
}

/** The rest of a variable's name after its first letter, then `= value` or nothing (a bare boolean). */
function readVariable(source: ConfigSource, start: string): GitConfigEntry | undefined {
  let key = start;
  let c: string;
  for (;;) {
    c = source.next();
    if (source.eof || !isKeyChar(c)) break;
    key += c.toLowerCase();
  }
  while (c === ' ' || c === '\t') c = source.next();
  if (c === '\n') return { key, value: undefined, line: source.line - 1 };
  if (c !== '=') return undefined;
  const value = readValue(source);
  if (value === undefined) return undefined;
  return { key, value, line: source.line - 1 };
}

/** git's parse_value: quotes toggle, `#`/`;` start a comment outside them, inner whitespace kept (one space per character), `\` escapes only `\n` `\t` `\b` `\\` `"` and a newline. */
function readValue(source: ConfigSource): string | undefined {
  let value = '';
  let quote = false;
  let comment = false;
  let spaces = 0;
  for (;;) {
    let c = source.next();
    if (c === '\n') {
      if (!quote) return value;
      source.line -= 1;
      return undefined;
    }
    if (comment) continue;
    if (isSpace(c) && !quote) {
      if (value.length > 0) spaces += 1;
      continue;
    }
    if (!quote && (c === ';' || c === '#')) {
      comment = true;
      continue;
    }
    value += ' '.repeat(spaces);
    spaces = 0;
    if (c === '\\') {
      c = source.next();
      if (c === '\n') continue;
      const escaped = ({ t: '\t', b: '\b', n: '\n', '\\': '\\', '"': '"' } as Record<string, string>)[c];
      if (escaped === undefined) return undefined;
      value += escaped;
      continue;
    }
    if (c === '"') {
      quote = !quote;
      continue;
    }
    value += c;
  }
}

/** A variable split as git splits it: section up to the first dot, key after the last, the subsection between. */
export function splitConfigKey(key: string): { section: string; subsection: string | undefined; name: string } {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first < 0) return { section: '', subsection: undefined, name: key };
  return { section: key.slice(0, first), subsection: first === last ? undefined : key.slice(first + 1, last), name: key.slice(last + 1) };
}

/** A value git's maybe_bool reads as a boolean (then keys like `pager.<cmd>` name no command). */
function isBoolean(value: string | undefined): boolean {
  return value === undefined || value === '' || /^(true|yes|on|false|no|off)$/i.test(value) || /^[-+]?[0-9]+[kmg]?$/i.test(value);
}

interface ExecutionKey {
  section: string;
  /** The key's last part, or `*` for any. */
  name: string;
  /** When only some values execute (undefined: every value). */
  executes?: (value: string | undefined) => boolean;
}

const anyCommand = (value: string | undefined): boolean => !isBoolean(value);
const bang = (value: string | undefined): boolean => value?.startsWith('!') === true;

/**
 * Every config key that names a command (or a file of commands) git — or a
 * program git starts for the repository — runs. Matched by section and last
 * part whatever the subsection (`credential.helper` and
 * `credential.<url>.helper` alike); a false positive costs a prompt, a miss a
 * silent execution. Sources: `git help config` (2.39 and later).
 */
const EXECUTION_KEYS: readonly (ExecutionKey & { why: string })[] = [
  { section: 'core', name: 'fsmonitor', executes: anyCommand, why: 'a hook run by git status, diff, add… (a boolean only picks the built-in daemon)' },
  { section: 'core', name: 'pager', why: 'the pager of every paged command (log, diff, show)' },
  { section: 'core', name: 'editor', why: 'the editor of commit, tag, rebase -i' },
  { section: 'core', name: 'sshcommand', why: 'runs instead of ssh for every ssh remote' },
  { section: 'core', name: 'askpass', why: 'runs to ask for credentials' },
  { section: 'core', name: 'gitproxy', why: 'runs as the proxy of git:// remotes' },
  { section: 'core', name: 'alternaterefscommand', why: 'runs to list an alternate\'s refs during fetch and push' },
  { section: 'sequence', name: 'editor', why: 'the editor of rebase -i todo lists' },
  { section: 'diff', name: 'external', why: 'runs instead of the built-in diff (diff, log -p, show)' },
  { section: 'diff', name: 'textconv', why: 'runs on file contents for diff, log -p, show, blame' },
  { section: 'diff', name: 'command', why: 'a diff driver that runs instead of the built-in diff' },
  { section: 'diff', name: 'tool', why: 'the tool git difftool runs' },
  { section: 'diff', name: 'guitool', why: 'the tool git difftool --gui runs' },
  { section: 'difftool', name: 'cmd', why: 'the command line git difftool runs' },
  { section: 'difftool', name: 'path', why: 'the program git difftool runs' },
  { section: 'merge', name: 'driver', why: 'a merge driver run by merge, rebase, cherry-pick, stash pop' },
  { section: 'merge', name: 'tool', why: 'the tool git mergetool runs' },
  { section: 'merge', name: 'guitool', why: 'the tool git mergetool --gui runs' },
  { section: 'mergetool', name: 'cmd', why: 'the command line git mergetool runs' },
  { section: 'mergetool', name: 'path', why: 'the program git mergetool runs' },
  { section: 'filter', name: '*', why: 'clean/smudge/process filters run by add, status, checkout, diff' },
  { section: 'alias', name: '*', executes: bang, why: 'an alias starting with ! runs a shell command' },
  { section: 'pager', name: '*', executes: anyCommand, why: 'the pager of one command (a boolean only turns paging on or off)' },
  { section: 'include', name: 'path', why: 'includes another config file' },
  { section: 'includeif', name: 'path', why: 'includes another config file under a condition' },
  { section: 'gpg', name: 'program', why: 'runs to sign and verify (commit -S, log --show-signature, tag -v)' },
  { section: 'gpg', name: 'defaultkeycommand', why: 'runs to pick an ssh signing key' },
  { section: 'credential', name: 'helper', why: 'runs to get and store credentials' },
  { section: 'uploadpack', name: 'packobjectshook', why: 'runs instead of pack-objects when serving a fetch' },
  { section: 'interactive', name: 'difffilter', why: 'filters the diff of add -p' },
  { section: 'web', name: 'browser', why: 'the browser git web--browse and help -w run' },
  { section: 'browser', name: 'cmd', why: 'the command line of a browser for git web--browse' },
  { section: 'browser', name: 'path', why: 'the program of a browser for git web--browse' },
  { section: 'help', name: 'browser', why: 'the browser git help -w runs' },
  { section: 'man', name: 'viewer', why: 'the man viewer git help runs' },
  { section: 'man', name: 'cmd', why: 'the command line of a man viewer' },
  { section: 'man', name: 'path', why: 'the program of a man viewer' },
  { section: 'instaweb', name: 'httpd', why: 'the web server git instaweb runs' },
  { section: 'instaweb', name: 'browser', why: 'the browser git instaweb runs' },
  { section: 'sendemail', name: 'smtpserver', why: 'a path here is a sendmail program git send-email runs' },
  { section: 'sendemail', name: 'sendmailcmd', why: 'the sendmail command of git send-email' },
  { section: 'sendemail', name: 'tocmd', why: 'runs to find recipients in git send-email' },
  { section: 'sendemail', name: 'cccmd', why: 'runs to find Cc recipients in git send-email' },
  { section: 'sendemail', name: 'headercmd', why: 'runs to add headers in git send-email' },
  { section: 'imap', name: 'tunnel', why: 'the tunnel command of git imap-send' },
  { section: 'remote', name: 'uploadpack', why: 'runs as upload-pack for a local or ssh remote (fetch, pull, ls-remote)' },
  { section: 'remote', name: 'receivepack', why: 'runs as receive-pack for a local or ssh remote (push)' },
  { section: 'remote', name: 'vcs', why: 'names the git-remote-<vcs> helper run for the remote' },
  { section: 'protocol', name: 'allow', why: 'can allow the ext:: transport, whose URLs are commands' },
  { section: 'submodule', name: 'update', executes: bang, why: 'an update mode starting with ! runs a command (submodule update)' },
  { section: 'tar', name: 'command', why: 'the compressor git archive runs for that format' },
  { section: 'trailer', name: 'command', why: 'runs to make a trailer value (interpret-trailers, commit --trailer)' },
  { section: 'trailer', name: 'cmd', why: 'runs to make a trailer value (interpret-trailers, commit --trailer)' },
  { section: 'hook', name: 'command', why: 'a config-defined hook (git 2.5x) run like the hook it names' },
  { section: 'guitool', name: 'cmd', why: 'a command of git gui\'s tools menu' },
  { section: 'lfs', name: 'path', why: 'a git-lfs custom transfer agent, run by the lfs filter' },
  { section: 'lfs', name: 'clean', why: 'a git-lfs extension, run by the lfs filter' },
  { section: 'lfs', name: 'smudge', why: 'a git-lfs extension, run by the lfs filter' },
];

/** Whether git (or a program it starts) would run a command because of this variable; `key` as {@link parseGitConfig} names it. */
export function isExecutionKey(key: string, value: string | undefined): boolean {
  const { section, subsection, name } = splitConfigKey(key);
  return EXECUTION_KEYS.some((rule) => {
    if (rule.section !== section || (rule.name !== '*' && rule.name !== name)) return false;
    // filter.* needs a driver name: `[filter] clean = x` names no driver git would use.
    if (rule.section === 'filter' && subsection === undefined) return false;
    return rule.executes === undefined || rule.executes(value);
  });
}

/** Why a key executes, for a preview: `diff.x.textconv: runs on file contents…`. */
export function describeExecutionKey(key: string): string | undefined {
  const { section, name } = splitConfigKey(key);
  return EXECUTION_KEYS.find((rule) => rule.section === section && (rule.name === '*' || rule.name === name))?.why;
}
