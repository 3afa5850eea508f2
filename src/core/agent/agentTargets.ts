// What an agent action touches, read from its exact tool_input (SPEC §18): the
// command of a shell action, the paths of a read or write action per agent tool,
// the URL of a fetch. Pure; the daemon judges what this returns (R-POL-6).
import type { AgentAction } from './agentAction.js';

/** The paths a read or write action names; `unknown` says why some are not known (then at least prompt). */
export interface ActionPaths {
  paths: string[];
  unknown?: string;
  /** The tool reads the contents of everything beneath each path (a content search; R-SH-10). */
  recursive?: boolean;
}

/** Fields that name one path, per agent tool; a tool not listed is read through all of them. */
const PATH_FIELDS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'claude-code/Read': ['file_path'],
  'claude-code/Edit': ['file_path'],
  'claude-code/Write': ['file_path'],
  'claude-code/MultiEdit': ['file_path'],
  'claude-code/NotebookEdit': ['notebook_path'],
  'claude-code/NotebookRead': ['notebook_path'],
  'claude-code/Grep': ['path'],
  'claude-code/Glob': ['path'],
  'claude-code/LS': ['path'],
  'gemini/read_file': ['file_path', 'absolute_path'],
  'gemini/write_file': ['file_path', 'absolute_path'],
  'gemini/replace': ['file_path', 'absolute_path'],
  'gemini/edit': ['file_path', 'absolute_path'],
  'gemini/glob': ['path', 'dir_path'],
  'gemini/search_file_content': ['path', 'dir_path'],
  'gemini/grep_search': ['path', 'dir_path'],
  'gemini/list_directory': ['path', 'dir_path'],
  ...Object.fromEntries(
    ['opencode', 'kilo'].flatMap((agent) => [
      [`${agent}/read`, ['filePath']],
      [`${agent}/write`, ['filePath']],
      [`${agent}/edit`, ['filePath']],
      [`${agent}/multiedit`, ['filePath']],
      [`${agent}/grep`, ['path']],
      [`${agent}/glob`, ['path']],
      [`${agent}/list`, ['path']],
    ]),
  ),
  'copilot/view': ['path'],
  'copilot/create': ['path'],
  'copilot/edit': ['path'],
  'copilot/grep': ['path'],
  'copilot/glob': ['path'],
  'qwen/read_file': ['file_path', 'absolute_path'],
  'qwen/write_file': ['file_path', 'absolute_path'],
  'qwen/edit': ['file_path', 'absolute_path'],
  'qwen/notebook_edit': ['notebook_path', 'file_path'],
  'qwen/glob': ['path', 'dir_path'],
  'qwen/grep_search': ['path', 'dir_path'],
  'qwen/list_directory': ['path', 'dir_path'],
  'droid/Read': ['file_path'],
  'droid/Create': ['file_path'],
  'droid/Edit': ['file_path'],
  'droid/MultiEdit': ['file_path'],
  'droid/LS': ['directory_path'],
  'droid/Glob': ['folder'],
  'droid/Grep': ['path'],
  // Auggie's paths are relative to its workspace root, which its hook reports as the cwd.
  'auggie/view': ['path'],
  'auggie/save-file': ['path'],
  'auggie/str-replace-editor': ['path'],
  'auggie/remove-files': [],
  'cline/editor': ['path'],
  // read_files names its files in `files` (entries `{path}` or strings), `file_paths` or `paths`: read by clineReadPaths.
  'cline/read_files': [],
  // search_codebase takes only `queries`: it searches the workspace root, the cwd Cline's plugin reports.
  'cline/search_codebase': [],
});

/** Fields that hold a list of paths, per agent tool (besides the `paths` every tool may carry). */
const PATH_LIST_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  'auggie/remove-files': 'file_paths',
});

const ANY_PATH_FIELDS = ['file_path', 'absolute_path', 'notebook_path', 'path', 'dir_path', 'filePath'];

/** Tools that search a directory and search the cwd when they name none. */
const SEARCHES_CWD = new Set([
  'claude-code/Grep',
  'claude-code/Glob',
  'claude-code/LS',
  'gemini/glob',
  'gemini/search_file_content',
  'gemini/grep_search',
  'gemini/list_directory',
  'opencode/grep',
  'opencode/glob',
  'opencode/list',
  'kilo/grep',
  'kilo/glob',
  'kilo/list',
  'copilot/grep',
  'copilot/glob',
  'qwen/glob',
  'qwen/grep_search',
  'qwen/list_directory',
  'droid/LS',
  'droid/Glob',
  'droid/Grep',
  'auggie/view',
  'cline/search_codebase',
]);

/** Tools that read the contents of every file beneath the directory they search (R-SH-10): judged by what lies beneath. */
const SEARCHES_CONTENT = new Set(['claude-code/Grep', 'gemini/search_file_content', 'gemini/grep_search', 'opencode/grep', 'kilo/grep', 'copilot/grep', 'qwen/grep_search', 'droid/Grep', 'cline/search_codebase']);

/** Fields that hold a file glob (or, Droid's Glob `patterns`, a list of them) read beside the searched directory: Claude Code Glob's `pattern`, Grep's `glob`. */
const GLOB_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  'claude-code/Glob': 'pattern',
  'claude-code/Grep': 'glob',
  'opencode/glob': 'pattern',
  'opencode/grep': 'include',
  'kilo/glob': 'pattern',
  'kilo/grep': 'include',
  'copilot/glob': 'pattern',
  'copilot/grep': 'glob',
  'qwen/glob': 'pattern',
  'qwen/grep_search': 'glob',
  'droid/Glob': 'patterns',
  'droid/Grep': 'glob_pattern',
});

/** A character that makes a path segment a glob (picomatch syntax: wildcards, classes, braces, extglobs, escapes). */
const GLOB_CHARACTER = /[*?[\]{}()!+@\\]/;

/**
 * The directory a glob's literal leading segments name (`~/.ssh/*` → `~/.ssh`,
 * `/*` → `/`), or the whole glob when it has no glob character; '' when its
 * first segment is already a glob. Everything the glob matches lies below it.
 */
export function globDirectory(glob: string): string {
  const segments = glob.split('/');
  const literal: string[] = [];
  for (const segment of segments) {
    if (GLOB_CHARACTER.test(segment)) break;
    literal.push(segment);
  }
  const directory = literal.join('/');
  return directory === '' && glob.startsWith('/') ? '/' : directory;
}

/** The lines of a Codex patch that name a file (`*** Update File: a.ts`, `*** Move to: b.ts`). */
const PATCH_FILE_LINE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/;

/** Every path a Codex `apply_patch` patch names. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const found = PATCH_FILE_LINE.exec(line);
    if (found !== null) paths.push((found[1] as string).trim());
  }
  return paths;
}

function patchText(input: Record<string, unknown>): string | undefined {
  for (const field of ['patch', 'input', 'command']) {
    const value = input[field];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n');
  }
  return undefined;
}

/** The paths a `read`/`write` action touches (R-PATH-1). */
export function actionPaths(action: Pick<AgentAction, 'agent' | 'tool' | 'input'>): ActionPaths {
  const key = `${action.agent}/${action.tool}`;
  const input = action.input;
  // Droid's ApplyPatch, Auggie's and Cline's apply_patch take the same patch text as Codex's apply_patch, in `input`.
  if (key === 'cline/read_files') return clineReadPaths(input);
  if (key === 'codex/apply_patch' || key === 'droid/ApplyPatch' || key === 'auggie/apply_patch' || key === 'cline/apply_patch') {
    const patch = patchText(input);
    if (patch === undefined) return { paths: [], unknown: 'the patch text was not found in the input' };
    const paths = patchPaths(patch);
    return paths.length === 0 ? { paths, unknown: 'the patch names no file' } : { paths };
  }
  const paths: string[] = [];
  for (const field of PATH_FIELDS[key] ?? ANY_PATH_FIELDS) {
    const value = input[field];
    if (typeof value === 'string' && value !== '') paths.push(value);
  }
  const listField = PATH_LIST_FIELDS[key];
  for (const field of listField === undefined ? ['paths'] : ['paths', listField]) {
    const many = input[field];
    if (!Array.isArray(many)) continue;
    for (const value of many) {
      if (typeof value !== 'string') return { paths, unknown: `an entry of "${field}" is not a string` };
      paths.push(value);
    }
  }
  if (paths.length === 0 && SEARCHES_CWD.has(key)) paths.push('.');
  // A glob can reach outside the directory searched (`../../.ssh/*`, `~/.aws/**`): its literal part is read too.
  const globField = GLOB_FIELDS[key];
  const glob = globField === undefined ? undefined : input[globField];
  const globs = typeof glob === 'string' ? [glob] : Array.isArray(glob) ? glob : [];
  const searched = paths[0] ?? '.';
  for (const one of globs) {
    if (typeof one !== 'string') return { paths, unknown: `an entry of "${globField ?? ''}" is not a string` };
    const directory = globDirectory(one);
    const absolute = directory.startsWith('/') || directory === '~' || directory.startsWith('~/');
    if (directory !== '') paths.push(absolute ? directory : `${searched}/${directory}`);
  }
  if (paths.length === 0) return { paths, unknown: `${action.tool} names no path assent can read from its input` };
  return SEARCHES_CONTENT.has(key) ? { paths, recursive: true } : { paths };
}

/**
 * The files of a Cline `read_files` call: its `files` (`{path, start_line?,
 * end_line?}` entries or strings), `file_paths` or `paths`. Any other key or
 * entry is a form Cline may read otherwise, so it makes the paths unknown.
 */
function clineReadPaths(input: Record<string, unknown>): ActionPaths {
  const paths: string[] = [];
  for (const [field, value] of Object.entries(input)) {
    if (field !== 'files' && field !== 'file_paths' && field !== 'paths') return { paths, unknown: `read_files has a field "${field}" assent does not read` };
    for (const entry of Array.isArray(value) ? value : [value]) {
      const path = typeof entry === 'string' ? entry : isEntry(entry) ? entry['path'] : undefined;
      if (typeof path !== 'string' || path === '') return { paths, unknown: `an entry of "${field}" is not a path or {path}` };
      paths.push(path);
    }
  }
  return paths.length === 0 ? { paths, unknown: 'read_files names no file' } : { paths };
}

function isEntry(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.keys(value).every((key) => key === 'path' || key === 'start_line' || key === 'end_line');
}

/**
 * A shell action's command text, or undefined when the input has none. Cline's
 * `run_commands` runs each of its `commands` in its own shell, and runs an
 * entry `{command, args}` as a program without one: only a single command
 * string, alone in the input, is judged; any other form has no command (it asks).
 */
export function actionCommand(input: Record<string, unknown>, agent?: AgentAction['agent']): string | undefined {
  if (agent === 'cline') {
    const keys = Object.keys(input);
    if (keys.length !== 1) return undefined;
    const value = input['commands'] ?? input['command'];
    const only = Array.isArray(value) && value.length === 1 ? value[0] : value;
    return typeof only === 'string' ? only : undefined;
  }
  const command = input['command'] ?? input['cmd'];
  if (typeof command === 'string') return command;
  return undefined;
}

/** A fetch action's URL, or undefined when the input has none; Cline's `fetch_web_content` names it in its one request. */
export function actionUrl(input: Record<string, unknown>): string | undefined {
  const url = input['url'];
  if (typeof url === 'string') return url;
  const requests = input['requests'];
  if (!Array.isArray(requests) || requests.length !== 1) return undefined;
  const only: unknown = requests[0];
  return typeof only === 'object' && only !== null && typeof (only as Record<string, unknown>)['url'] === 'string' ? ((only as Record<string, unknown>)['url'] as string) : undefined;
}

/** What "approve for session" remembers of an agent action (R-POL-7), and how the preview says it. */
export interface SessionGrantSubject {
  /** Compared by digest: equal subjects in the same session and tool pass. */
  subject: Record<string, unknown>;
  /** For the preview: what will be remembered. */
  label: string;
}

/**
 * A shell action's exact command text (not the whole shell tool); a read or
 * write action's paths, relative ones against the cwd (not the whole tool);
 * undefined for other kinds, which keep the exact input.
 */
export function sessionGrantSubject(action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'cwd'>): SessionGrantSubject | undefined {
  if (action.kind === 'shell') {
    const command = actionCommand(action.input, action.agent);
    if (command === undefined) return undefined;
    return { subject: { command }, label: `the exact command text ${JSON.stringify(command)}, for this agent session` };
  }
  if (action.kind === 'read' || action.kind === 'write') {
    const { paths, unknown } = actionPaths(action);
    if (unknown !== undefined || paths.length === 0) return undefined;
    const absolute = [...new Set(paths.map((path) => (path.startsWith('/') || path === '~' || path.startsWith('~/') ? path : `${action.cwd}/${path}`)))].sort();
    return { subject: { access: action.kind, paths: absolute }, label: `${action.kind}s of ${absolute.map((path) => JSON.stringify(path)).join(', ')} by ${action.tool}, for this agent session` };
  }
  return undefined;
}
