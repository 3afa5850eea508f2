// The risk of an approval (R-POL-10, R-REM-5): a level — low, elevated, high —
// and the reasons for it, read by a person before deciding. A hint for the
// reviewer, never a policy input: what runs is decided by the rules alone.
// Findings come from the parsed words (core/policy/commandRisks.ts) and from where
// the planned paths land (writes, recursive deletes); this file levels them.
import { isPlainObject } from '../base/plainObject.js';
import { isUnderAny } from '../policy/pathPolicy.js';

export type RiskLevel = 'low' | 'elevated' | 'high';

/** Lowest first; a level is the highest of its findings'. */
export const RISK_LEVELS: readonly RiskLevel[] = ['low', 'elevated', 'high'];

/**
 * What one finding is. The first four are the page's risk line of R-REM-5;
 * the rest are the signals of R-POL-10.
 */
export type RiskFlag =
  | 'destructive'
  | 'shell'
  | 'write outside cwd'
  | 'network'
  | 'runs project code'
  | 'network into interpreter'
  | 'privilege escalation'
  | 'container host mount'
  | 'privileged container'
  | 'force push'
  | 'remote history rewrite'
  | 'recursive delete outside cwd'
  | 'gate file write'
  | 'not read-only';

/**
 * The flag for network data piped or substituted into a shell or interpreter
 * (`curl … | sh`, `bash <(wget …)`, `sh -c "$(curl …)"`): the shell policy
 * reports it with this name, whoever detects it.
 */
export const NETWORK_INTO_INTERPRETER: RiskFlag = 'network into interpreter';

/** The level each flag raises an approval to (R-POL-10). */
const FLAG_LEVEL: Readonly<Record<RiskFlag, RiskLevel>> = {
  shell: 'low',
  // Local but not reversible: more than "local, reversible", less than the listed high risks.
  destructive: 'elevated',
  'write outside cwd': 'elevated',
  network: 'elevated',
  'runs project code': 'elevated',
  'network into interpreter': 'high',
  'privilege escalation': 'high',
  'container host mount': 'high',
  'privileged container': 'high',
  'force push': 'high',
  'remote history rewrite': 'high',
  'recursive delete outside cwd': 'high',
  'gate file write': 'high',
  // An MCP tool whose server says it changes things but destroys nothing (`destructiveHint: false`).
  'not read-only': 'elevated',
};

/** The order flags are shown in: the page's four first, as before, then the rest. */
export const RISK_ORDER: readonly RiskFlag[] = [
  'destructive',
  'shell',
  'write outside cwd',
  'network',
  'runs project code',
  'network into interpreter',
  'privilege escalation',
  'container host mount',
  'privileged container',
  'force push',
  'remote history rewrite',
  'recursive delete outside cwd',
  'gate file write',
  'not read-only',
];

/**
 * One finding: a flag and what raised it (`sudo`, `git push --force`, `rm -r`).
 * `detail` comes from assent's own tables — a program, option or gate-file
 * name — never from the command's operands, so a push, which must carry no
 * argument (R-REM-4), can show it.
 */
export interface RiskSignal {
  flag: RiskFlag;
  detail?: string;
}

/** What an approval records as `caller.risk` and every view shows, level first. */
export interface ApprovalRisk {
  level: RiskLevel;
  /** Each finding in words, most severe first: `privilege escalation (sudo)`, `shell`. */
  reasons: string[];
  /** The flags found, in display order (the page's risk line). */
  flags: RiskFlag[];
}

const rank = (level: RiskLevel): number => RISK_LEVELS.indexOf(level);

/** Signals each once, in display order (flag, then detail as first found). */
export function orderRisks(signals: Iterable<RiskSignal>): RiskSignal[] {
  const seen = new Map<string, RiskSignal>();
  for (const signal of signals) {
    const key = `${signal.flag}\u0000${signal.detail ?? ''}`;
    if (!seen.has(key)) seen.set(key, signal.detail === undefined ? { flag: signal.flag } : { flag: signal.flag, detail: signal.detail });
  }
  const all = [...seen.values()];
  return RISK_ORDER.flatMap((flag) => all.filter((signal) => signal.flag === flag));
}

/** The level and reasons of a set of findings: the highest level found; `low` when nothing is. */
export function riskLevel(signals: readonly RiskSignal[]): ApprovalRisk {
  const ordered = orderRisks(signals);
  const flags = RISK_ORDER.filter((flag) => ordered.some((signal) => signal.flag === flag));
  let level: RiskLevel = 'low';
  for (const flag of flags) if (rank(FLAG_LEVEL[flag]) > rank(level)) level = FLAG_LEVEL[flag];
  // Most severe first, then display order; one reason per flag, its details together.
  const bySeverity = [...flags].sort((a, b) => rank(FLAG_LEVEL[b]) - rank(FLAG_LEVEL[a]));
  const reasons = bySeverity.map((flag) => {
    const details = ordered.filter((signal) => signal.flag === flag && signal.detail !== undefined).map((signal) => signal.detail as string);
    return details.length === 0 ? flag : `${flag} (${details.join(', ')})`;
  });
  return { level, reasons, flags };
}

/**
 * The risk of an agent action: its kind (a shell command, a fetch, an MCP tool
 * a hook sees without annotations, R-POL-3) and what its rules found (`found`:
 * the commands' own findings, writes and deletes by where they land).
 */
export function agentActionRisk(kind: string, found: readonly RiskSignal[] = []): ApprovalRisk {
  const signals: RiskSignal[] = [...found];
  if (kind === 'shell') signals.push({ flag: 'shell' });
  if (kind === 'fetch') signals.push({ flag: 'network', detail: 'fetch' });
  // A hook sees no annotations, so an MCP tool may do anything its server can: at least elevated.
  if (kind === 'mcp') signals.push({ flag: 'destructive', detail: 'an MCP tool without annotations' });
  return riskLevel(signals);
}

/** What a gateway call's risk reads: the server's annotations (hints, R-POL-3). */
export interface ToolAnnotationHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * The risk of a gateway call (R-POL-10): `low` for a tool its server marks
 * `readOnlyHint: true`, `high` for one it marks `destructiveHint: true`, and
 * `elevated` for every other (no annotations, or a write the server calls not
 * destructive). A level the operator set for the tool (`policy.toolRisk`,
 * named by `setBy`) replaces the annotations' level; their findings stay as
 * the reasons beside it.
 */
export function toolCallRisk(annotations: ToolAnnotationHints | undefined, configured?: { level: RiskLevel; setBy: string }): ApprovalRisk {
  const readOnly = annotations?.readOnlyHint === true;
  const declared = !readOnly && annotations?.destructiveHint === true;
  const signals: RiskSignal[] = [];
  if (declared) signals.push({ flag: 'destructive', detail: 'destructiveHint' });
  else if (annotations === undefined) signals.push({ flag: 'destructive', detail: 'no MCP annotations' });
  else if (!readOnly && annotations.destructiveHint === false) signals.push({ flag: 'not read-only', detail: 'MCP annotations' });
  else if (!readOnly) signals.push({ flag: 'destructive', detail: 'MCP defaults' });
  const found = riskLevel(signals);
  // The flag is elevated on its own; a tool its server itself calls destructive is the high case of R-POL-10's table.
  const level: RiskLevel = declared ? 'high' : found.level;
  if (configured === undefined) return { ...found, level };
  return { level: configured.level, reasons: [`set by ${configured.setBy}`, ...found.reasons], flags: found.flags };
}

/** Files a shell start reads: a write there is code that runs later (R-POL-8). */
const STARTUP_FILES: ReadonlySet<string> = new Set(['.bashrc', '.bash_profile', '.bash_login', '.profile', '.zshrc', '.zprofile', '.zshenv']);
/** Gate files by their own name, wherever they are (R-SH-9). */
const GATE_NAMES: ReadonlySet<string> = new Set([
  '.gitmodules', '.mcp.json', '.envrc', '.pre-commit-config.yaml', '.npmrc', '.yarnrc.yml', '.yarnrc', '.devcontainer.json',
  ...['lefthook', '.lefthook', 'lefthook-local', '.lefthook-local'].flatMap((base) => ['yml', 'yaml', 'json', 'toml'].map((ext) => `${base}.${ext}`)),
]);
/** Directories of agent and tool configuration: anything beneath is a gate file (R-SH-9, R-POL-8). */
const GATE_DIRS: ReadonlySet<string> = new Set(['.claude', '.gemini', '.codex', '.cursor', '.opencode', '.kilo', '.qwen', '.factory', '.augment', '.cline', '.clinerules', '.devcontainer', '.idea', '.husky', '.lefthook']);
/** Files of `.vscode` that VS Code runs from on its own (a task on folder open, a terminal profile, a debug launch). */
const VSCODE_GATES: ReadonlySet<string> = new Set(['tasks.json', 'settings.json', 'launch.json']);
/** Under `.git`: configuration and hooks (R-SH-9), and submodules' and worktrees' own (R-SH-12). */
const GIT_GATES: ReadonlySet<string> = new Set(['config', 'hooks', 'info', 'modules', 'worktrees', 'config.worktree', 'commondir']);

/**
 * The gate file (R-SH-9) an absolute path is, by name: assent's own word for
 * it, or undefined. Judged on the path's components wherever they are — a
 * superset of the policy's globs, which is right for a hint that must not
 * stay quiet where the rules prompt.
 */
export function gateFileOf(path: string): string | undefined {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  const last = parts.at(-1);
  if (last !== undefined && (GATE_NAMES.has(last) || STARTUP_FILES.has(last) || last.endsWith('.code-workspace'))) return last;
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i] as string;
    const next = parts[i + 1];
    if (GATE_DIRS.has(part)) return `${part}/`;
    if (part === '.git' && next !== undefined && GIT_GATES.has(next)) return ['config', 'config.worktree', 'commondir'].includes(next) ? `.git/${next}` : `.git/${next}/`;
    if (part === '.github' && next === 'hooks') return '.github/hooks/';
    if (part === '.vscode' && next !== undefined && i + 2 === parts.length && VSCODE_GATES.has(next)) return `.vscode/${next}`;
    if (part === '.config' && next === 'fish') return '.config/fish/';
  }
  return undefined;
}

/**
 * What a planned write risks, from its resolved forms (empty when where it
 * lands is not known): a write outside the cwd, and a write to a gate file.
 */
export function writeRisks(forms: readonly string[], cwds: readonly string[]): RiskSignal[] {
  const signals: RiskSignal[] = [];
  if (forms.length === 0 || !forms.some((form) => isUnderAny(form, cwds))) signals.push({ flag: 'write outside cwd' });
  for (const form of forms) {
    const gate = gateFileOf(form);
    if (gate !== undefined) signals.push({ flag: 'gate file write', detail: gate });
  }
  return signals;
}

/**
 * A recursive delete's operand, planned for the risk line only: `request`
 * indexes `ActionPlan.requests` (undefined: where it lands is not statically
 * known); `via` names what deletes (`rm -r`, `find -delete`).
 */
export interface PlannedDelete {
  request?: number;
  via: string;
}

/**
 * A recursive delete whose operand may lie outside the cwd is high: any form
 * outside it (after `cd /tmp`, relative operands have a form there; a symlink
 * leading out has its target's form), or where it lands is not known.
 */
export function deleteRisks(deletes: readonly PlannedDelete[], resolved: readonly (readonly string[])[], cwds: readonly string[]): RiskSignal[] {
  const signals: RiskSignal[] = [];
  for (const planned of deletes) {
    const forms = planned.request === undefined ? [] : (resolved[planned.request] ?? []);
    if (forms.length === 0 || forms.some((form) => !isUnderAny(form, cwds))) signals.push({ flag: 'recursive delete outside cwd', detail: planned.via });
  }
  return signals;
}

const isFlag = (value: unknown): value is RiskFlag => typeof value === 'string' && (RISK_ORDER as readonly string[]).includes(value);

/**
 * The level a record carries whose rating was not kept (a call reconciled
 * after a restart, an effect run under a proof): the caller's own risk when it
 * has one, else `elevated` — a record without a level would read as "unrated"
 * downstream, and `low` would understate a call nobody rated (R-POL-10).
 */
export function keptRiskLevel(caller: Record<string, unknown> | undefined): RiskLevel {
  return readApprovalRisk(caller?.['risk'])?.level ?? 'elevated';
}

/**
 * The risk an approval recorded in `caller.risk`, for the views: the
 * `{level, reasons, flags}` of R-POL-10, or the flag list approvals filed
 * before it carry (levelled here from its flags). Undefined when there is none.
 */
export function readApprovalRisk(value: unknown): ApprovalRisk | undefined {
  if (Array.isArray(value)) return riskLevel(value.filter(isFlag).map((flag) => ({ flag })));
  if (!isPlainObject(value) || typeof value['level'] !== 'string' || !(RISK_LEVELS as readonly string[]).includes(value['level'])) return undefined;
  const reasons = Array.isArray(value['reasons']) ? value['reasons'].filter((reason): reason is string => typeof reason === 'string') : [];
  const flags = Array.isArray(value['flags']) ? value['flags'].filter(isFlag) : [];
  return { level: value['level'] as RiskLevel, reasons, flags };
}

/**
 * What a push may say of a risk (R-REM-4): the level and the flags that raised
 * it to that level — assent's own words, without the details that name programs
 * or files of the command.
 */
export function pushRisk(risk: ApprovalRisk): { level: RiskLevel; flags: RiskFlag[] } {
  return { level: risk.level, flags: risk.flags.filter((flag) => FLAG_LEVEL[flag] === risk.level) };
}

/** `high: privilege escalation (sudo), shell` — the level first, then the reasons (unescaped: the caller escapes). */
export function describeRisk(risk: Pick<ApprovalRisk, 'level' | 'reasons'>): string {
  return risk.reasons.length === 0 ? risk.level : `${risk.level}: ${risk.reasons.join(', ')}`;
}
