// Plans and applies `assent install` / `assent uninstall` for one agent and
// scope: every file's new text is computed (and every refusal raised) before
// anything is written, each changed file gets a backup beside it and is then
// replaced atomically, and installs.json remembers what install wrote so that
// uninstall can restore the bytes that were there before.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import { requiredAgentTimeoutSeconds } from '../../core/agent/hookDeadline.js';
import type { StatePaths } from '../../state/statePaths.js';
import { agentTarget, isHookFileAgent, isPluginAgent, type AgentId, type AgentTarget, type InstallScope, type TargetEnvironment } from './agentTargets.js';
import {
  asHooksSettings,
  findAssentHooks,
  findAssentMcpServer,
  fromHooksSettings,
  withAssentHooks,
  withAssentMcpServer,
  withoutAssentHooks,
  withoutAssentMcpServer,
  type DesiredHooks,
  type HookEntry,
} from './assentEntries.js';
import { findCodexMcpBlock, withCodexMcpBlock, withoutCodexMcpBlock } from './codexToml.js';
import { checkDroidInstall } from './droidSettings.js';
import { hookCommand, mcpServerCommand, type AssentInstallation } from './hookCommand.js';
import { digestText, readInstallRecords, writeInstallRecords, type InstallRecord, type InstallRecords } from './installRecords.js';
import {
  createDirs,
  detectJsonFormat,
  NEW_FILE_FORMAT,
  parseSettings,
  readFileState,
  readJson,
  replaceFile,
  resolveSettingsPath,
  serializeJson,
  writeBackup,
  type FileState,
  type JsonDialect,
  type JsonFormat,
  type JsonObject,
} from './settingsFiles.js';
import { addAssentHooksText, removeAssentHooksText, removeAssentMcpServerText, setAssentMcpServerText } from './settingsTextEdits.js';
import type { AgentPlan, EntryKind, FileChange, InstallRequest } from './agentPlan.js';
import { planPluginInstall, planPluginUninstall } from './pluginPlan.js';
import { CLINE_HOOK_TIMEOUT_SECONDS, planClineInstall, planClineUninstall } from './clineHooks.js';
import { unifiedDiff } from './textDiff.js';

/**
 * The two hook entries for an agent, with the timeout in its unit: long enough
 * for a spawn, the hello and the whole of hooks.timeoutSeconds, plus the margin
 * the hook keeps (R-HOOK-11); the same seconds go on the hook's command line.
 */

/** What an agent shows while assent's before-tool hook runs: it may be waiting for a person, so it says where to decide. */
export const HOOK_STATUS_MESSAGE = 'assent: checking this call; if it waits for approval, decide with `assent watch` or the web page';
/** What Claude Code shows while the PermissionRequest hook waits beside its dialog (R-HOOK-9). */
export const HOOK_DIALOG_STATUS_MESSAGE = 'assent: this call also waits in `assent watch` and the web page; the first answer decides';
/** Gemini CLI shows a hook's name ("Executing Hook: …") while it runs. */
export const GEMINI_HOOK_NAMES = { before: 'assent (if it waits: `assent watch` or the web page)', after: 'assent (audit)' } as const;

export function desiredHooks(target: AgentTarget, installation: AssentInstallation, hookTimeoutSeconds: number, claudeNativePrompt = false): DesiredHooks {
  // Cline's hook timeout is fixed: the hook is told the one it has.
  const seconds = target.agent === 'cline' ? CLINE_HOOK_TIMEOUT_SECONDS : requiredAgentTimeoutSeconds(hookTimeoutSeconds);
  const timeout = target.timeoutUnit === 'milliseconds' ? seconds * 1000 : seconds;
  const before: HookEntry = { type: 'command', command: hookCommand(installation, target.agent, false, seconds), timeout };
  const after: HookEntry = { type: 'command', command: hookCommand(installation, target.agent, true, seconds), timeout };
  if (target.agent === 'gemini') return { before: { ...before, name: GEMINI_HOOK_NAMES.before }, after: { ...after, name: GEMINI_HOOK_NAMES.after } };
  // Claude Code and Codex show `statusMessage` while the hook runs; the other agents have no such key (docs/agents.md).
  // R-HOOK-9: the PermissionRequest hook is the before-tool command itself (it tells the events apart), waiting as long.
  if (target.agent === 'claude-code' && claudeNativePrompt) return { before: { ...before, statusMessage: HOOK_STATUS_MESSAGE }, after, dialog: { ...before, statusMessage: HOOK_DIALOG_STATUS_MESSAGE } };
  if (target.agent === 'claude-code' || target.agent === 'codex') return { before: { ...before, statusMessage: HOOK_STATUS_MESSAGE }, after };
  return { before, after };
}

function textOf(state: FileState): string {
  return state.exists ? state.text : '';
}

function diffFor(file: string, before: FileState, afterText: string | undefined): string[] {
  return unifiedDiff(textOf(before), afterText ?? '', {
    fromLabel: before.exists ? file : '/dev/null',
    toLabel: afterText === undefined ? '/dev/null' : file,
  });
}

function change(file: string, kinds: EntryKind[], before: FileState, afterText: string | undefined): FileChange {
  const changed = afterText === undefined ? before.exists : afterText !== textOf(before) || !before.exists;
  return { file, kinds, before, afterText, changed, diff: changed ? diffFor(file, before, afterText) : [] };
}

function meansTheSame(text: string, value: JsonObject, dialect: JsonDialect): boolean {
  try {
    return JSON.stringify(readJson(text, dialect)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

type TextEdit = (text: string, format: JsonFormat) => string;

export interface JsonEditOptions {
  /** How the agent reads the file (default plain JSON). */
  dialect?: JsonDialect;
  /** Set to whether the file's own text was kept (false: it was re-serialized). */
  how?: { textKept?: boolean };
}

/**
 * The new text of a JSON settings file: `editText` changes the file's own text
 * (every other byte kept); it must mean exactly what `edit` makes of the
 * parsed object, else the object is serialized in the file's format instead —
 * unless the file holds comments, which serializing would drop: that is
 * refused. The text stays byte-identical when `edit` returns its input.
 */
export function editedJsonText(file: string, text: string, edit: (settings: JsonObject) => JsonObject, editText: TextEdit, options: JsonEditOptions = {}): string {
  const dialect = options.dialect ?? 'json';
  const how = options.how ?? {};
  const blank = text.trim() === '';
  const settings = blank ? {} : parseSettings(file, text, dialect);
  const edited = edit(settings);
  if (edited === settings) return text;
  if (blank) return serializeJson(edited, NEW_FILE_FORMAT);
  const format = detectJsonFormat(text);
  let candidate: string | undefined;
  try {
    candidate = editText(text, format);
  } catch {
    candidate = undefined;
  }
  how.textKept = candidate !== undefined && meansTheSame(candidate, edited, dialect);
  if (how.textKept) return candidate as string;
  if (dialect !== 'json' && !meansTheSame(text, settings, 'json')) {
    throw new AssentError('conflict', `${file} holds comments, and assent could not place its entries in the file's text without rewriting the file, which would drop them; remove the comments (a backup of the file keeps them), then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  return serializeJson(edited, format);
}

function jsonChange(file: string, kinds: EntryKind[], dialect: JsonDialect, edit: (settings: JsonObject) => JsonObject, editText: TextEdit): FileChange {
  const before = readFileState(file);
  return change(file, kinds, before, editedJsonText(file, textOf(before), edit, editText, { dialect }));
}

/** Computes what `assent install` would write; throws (changing nothing) when a file cannot be merged. */
export function planInstall(request: InstallRequest): AgentPlan {
  const target = agentTarget(request.agent, request.scope, request.where);
  if (isPluginAgent(target.agent)) return planPluginInstall(target, request, (file, kinds, before, afterText) => change(file, kinds, before, afterText));
  if (isHookFileAgent(target.agent)) return planClineInstall(target, request, (file, kinds, before, afterText) => change(file, kinds, before, afterText));
  const hooks = desiredHooks(target, request.installation, request.hookTimeoutSeconds, request.claudeNativePrompt === true);
  const server = mcpServerCommand(request.installation);
  const hooksFile = resolveSettingsPath(target.hooksFile);
  if (target.agent === 'droid') checkDroidInstall(target, hooksFile);
  const atRoot = target.hooksAtRoot === true;
  const mcpFile = resolveSettingsPath(target.mcp.file);
  const sameFile = request.mcp && target.mcp.format === 'json' && mcpFile === hooksFile;
  const files: FileChange[] = [
    jsonChange(
      hooksFile,
      sameFile ? ['hooks', 'mcp'] : ['hooks'],
      target.jsonDialect,
      (settings) => {
        const withHooks = fromHooksSettings(target, withAssentHooks(asHooksSettings(target, settings), target, hooks, hooksFile));
        return sameFile ? withAssentMcpServer(withHooks, server, hooksFile) : withHooks;
      },
      (text, format) => {
        const withHooks = addAssentHooksText(removeAssentHooksText(text, atRoot), target, hooks, format);
        return sameFile ? setAssentMcpServerText(withHooks, server, format) : withHooks;
      },
    ),
  ];
  if (request.mcp && !sameFile) {
    if (target.mcp.format === 'json') {
      files.push(jsonChange(mcpFile, ['mcp'], target.jsonDialect, (settings) => withAssentMcpServer(settings, server, mcpFile), (text, format) => setAssentMcpServerText(text, server, format)));
    }
    else {
      const before = readFileState(mcpFile);
      files.push(change(mcpFile, ['mcp'], before, withCodexMcpBlock(textOf(before), server, mcpFile)));
    }
  }
  return { target, files };
}

/** Whether a text still holds any assent entry of the given kinds (a restore candidate must not). */
function holdsAssentEntries(file: string, text: string, format: 'json' | 'toml', kinds: EntryKind[], target: AgentTarget): boolean {
  if (format === 'toml') return findCodexMcpBlock(text, file) !== undefined;
  const settings = parseSettings(file, text, target.jsonDialect);
  return (kinds.includes('hooks') && findAssentHooks(asHooksSettings(target, settings)).length > 0) || (kinds.includes('mcp') && findAssentMcpServer(settings) !== undefined);
}

/**
 * The exact bytes from before install, when the file is still exactly what
 * install wrote and install's record covers no more than what is being
 * removed: `{ text }`, `{ delete: true }` for a file install created, or
 * undefined when only a structural removal is sound.
 */
function exactRestore(file: string, current: string, record: InstallRecord | undefined, kinds: EntryKind[], format: 'json' | 'toml', target: AgentTarget): { text: string } | { delete: true } | undefined {
  if (record === undefined || record.afterDigest !== digestText(current)) return undefined;
  if (!record.kinds.every((kind) => kinds.includes(kind))) return undefined;
  if (record.beforeDigest === undefined) return { delete: true };
  if (record.backup === undefined) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(record.backup, 'utf8');
  } catch {
    return undefined;
  }
  if (digestText(text) !== record.beforeDigest) return undefined;
  try {
    if (holdsAssentEntries(file, text, format, ['hooks', 'mcp'], target)) return undefined;
  } catch {
    return undefined;
  }
  return { text };
}

export interface UninstallRequest {
  agent: AgentId;
  scope: InstallScope;
  where: TargetEnvironment;
  mcp: boolean;
  records: InstallRecords;
}

/** Computes what `assent uninstall` would write; files without assent entries are left out. */
export function planUninstall(request: UninstallRequest): AgentPlan {
  const target = agentTarget(request.agent, request.scope, request.where);
  if (isPluginAgent(target.agent)) return planPluginUninstall(target, request.records, (file, kinds, before, afterText) => change(file, kinds, before, afterText));
  if (isHookFileAgent(target.agent)) return planClineUninstall(target, request.records, (file, kinds, before, afterText) => change(file, kinds, before, afterText));
  const hooksFile = resolveSettingsPath(target.hooksFile);
  const mcpFile = resolveSettingsPath(target.mcp.file);
  const sameFile = target.mcp.format === 'json' && mcpFile === hooksFile;
  const jobs: { file: string; kinds: EntryKind[]; format: 'json' | 'toml' }[] = [{ file: hooksFile, kinds: request.mcp && sameFile ? ['hooks', 'mcp'] : ['hooks'], format: 'json' }];
  if (request.mcp && !sameFile) jobs.push({ file: mcpFile, kinds: ['mcp'], format: target.mcp.format });
  const files: FileChange[] = [];
  for (const job of jobs) {
    const before = readFileState(job.file);
    if (!before.exists) continue;
    const hooks = job.kinds.includes('hooks');
    const mcp = job.kinds.includes('mcp');
    const how: { textKept?: boolean } = {};
    const structural =
      job.format === 'toml'
        ? withoutCodexMcpBlock(before.text, job.file)
        : editedJsonText(
            job.file,
            before.text,
            (settings) => {
              const withoutHooks = (value: JsonObject): JsonObject => fromHooksSettings(target, withoutAssentHooks(asHooksSettings(target, value)));
              const edited = mcp ? withoutAssentMcpServer(hooks ? withoutHooks(settings) : settings) : hooks ? withoutHooks(settings) : settings;
              return JSON.stringify(edited) === JSON.stringify(settings) ? settings : edited;
            },
            (text) => (mcp ? removeAssentMcpServerText(hooks ? removeAssentHooksText(text, target.hooksAtRoot === true) : text) : removeAssentHooksText(text, target.hooksAtRoot === true)),
            { dialect: target.jsonDialect, how },
          );
    if (structural === before.text) continue;
    const record = request.records[job.file];
    const exact = exactRestore(job.file, before.text, record, job.kinds, job.format, target);
    const planned = exact === undefined ? change(job.file, job.kinds, before, structural) : change(job.file, job.kinds, before, 'delete' in exact ? undefined : exact.text);
    planned.restoredExactly = exact !== undefined;
    if (exact === undefined && job.format === 'json') planned.textKept = how.textKept === true;
    if (record !== undefined) planned.record = record;
    files.push(planned);
  }
  return { target, files };
}

export interface ApplyOptions {
  paths: StatePaths;
  now: Date;
}

/** The backup written for each changed file that existed, by file. */
export type Backups = Record<string, string>;

function removeEmptyDirs(dirs: string[]): void {
  for (const dir of [...dirs].reverse()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      return; // Not empty (or gone): leave it and everything above it.
    }
  }
}

/**
 * Writes an install plan: backups first, then each file atomically, then the
 * records. A record keeps the oldest "before" it covers, so uninstall after
 * two installs still restores the file as it was before the first.
 */
export function applyInstall(plan: AgentPlan, options: ApplyOptions): Backups {
  const backups: Backups = {};
  const records = readInstallRecords(options.paths);
  for (const file of plan.files.filter((f) => f.changed)) {
    const afterText = file.afterText ?? '';
    const createdDirs = createDirs(path.dirname(file.file));
    if (file.before.exists) backups[file.file] = writeBackup(file.file, file.before.text, options.now);
    replaceFile(file.file, afterText, file.before);
    const previous = records[file.file];
    const continues = previous !== undefined && file.before.exists && previous.afterDigest === digestText(file.before.text);
    const record: InstallRecord = continues
      ? { ...previous, kinds: [...new Set([...previous.kinds, ...file.kinds])], afterDigest: digestText(afterText), installedAt: options.now.toISOString() }
      : {
          agent: plan.target.agent,
          scope: plan.target.scope,
          kinds: file.kinds,
          afterDigest: digestText(afterText),
          // Dirs an earlier install created stay assent's to remove (only while they are empty) after the file was deleted by hand.
          createdDirs: [...new Set([...(previous?.createdDirs ?? []), ...createdDirs])],
          installedAt: options.now.toISOString(),
          ...(file.before.exists ? { beforeDigest: digestText(file.before.text), backup: backups[file.file] as string } : {}),
        };
    records[file.file] = record;
  }
  if (plan.files.some((f) => f.changed)) writeInstallRecords(options.paths, records);
  return backups;
}

/**
 * Writes an uninstall plan: a backup of each file as it is now, then the file
 * (or its removal, for a file install created), then the records: gone when
 * the file is back to its old bytes, else following the file's new text.
 */
export function applyUninstall(plan: AgentPlan, options: ApplyOptions): Backups {
  const backups: Backups = {};
  const records = readInstallRecords(options.paths);
  for (const file of plan.files.filter((f) => f.changed)) {
    // Exactly what install wrote holds nothing of the user's: only a file changed since gets a backup.
    if (file.before.exists && file.restoredExactly !== true) backups[file.file] = writeBackup(file.file, file.before.text, options.now);
    if (file.afterText === undefined) {
      const current = readFileState(file.file);
      if (!(current.exists && file.before.exists && current.text === file.before.text)) {
        throw new AssentError('conflict', `${file.file} changed while assent was editing it (the agent may have written it); nothing was changed, run this again`, { details: { path: file.file } });
      }
      fs.rmSync(file.file);
      for (const extra of file.alsoRemove ?? []) fs.rmSync(extra, { force: true });
      removeEmptyDirs(file.record?.createdDirs ?? []);
    } else replaceFile(file.file, file.afterText, file.before);
    const previous = records[file.file];
    const left = (previous?.kinds ?? []).filter((kind) => !file.kinds.includes(kind));
    if (previous === undefined || left.length === 0 || file.afterText === undefined) delete records[file.file];
    else records[file.file] = { ...previous, kinds: left, afterDigest: digestText(file.afterText) };
  }
  if (plan.files.some((f) => f.changed)) writeInstallRecords(options.paths, records);
  return backups;
}
