// The configuration the operator last confirmed (R-CFG-4), as the daemon keeps it
// in the journal's meta table. The daemon writes it; a gateway that finds no
// daemon reads it read-only, so an unconfirmed edit of config.json never decides.
import { nativeDigestOf } from './nativeHash.js';
import { DEFAULT_CONFIG, type Config, type ConfigProblem } from '../core/config/config.js';
import { AssentError } from '../core/base/errors.js';
import { inspectConfigText } from './configFile.js';
import { readJournalMeta } from './journal.js';

/** The journal meta key holding the confirmed configuration. */
export const PINNED_CONFIG_KEY = 'pinned_config';

export interface StoredPin {
  revision: string;
  /** The confirmed text; null for the defaults of a missing config.json. */
  text: string | null;
}

export function encodePin(pin: StoredPin): string {
  return JSON.stringify(pin);
}

/** The journal meta key that keeps the last damaged pin a confirmed reload replaced, byte for byte. */
export const DAMAGED_PIN_KEY = 'pinned_config_damaged';

/**
 * The writes that record a newly confirmed configuration: the damaged record it
 * replaces (if the stored one is damaged) is kept first under DAMAGED_PIN_KEY,
 * so a reload never discards what was there; then the new pin.
 */
export function pinWrites(previous: string | undefined, pin: StoredPin): [key: string, value: string][] {
  const writes: [string, string][] = [];
  if (previous !== undefined && pinDamage(previous) !== undefined) writes.push([DAMAGED_PIN_KEY, previous]);
  writes.push([PINNED_CONFIG_KEY, encodePin(pin)]);
  return writes;
}

/**
 * What is wrong with a stored pin that cannot even be read as one: empty (a 0-byte
 * record), not JSON (cut short, or overwritten), or JSON without a revision or
 * text. Undefined for a readable pin, valid or not. No assent writes such a
 * record, so it is damage, not a stricter schema.
 */
export function pinDamage(stored: string): string | undefined {
  if (stored.trim() === '') return `empty (${Buffer.byteLength(stored)} bytes)`;
  let pin: unknown;
  try {
    pin = JSON.parse(stored);
  } catch {
    return `not valid JSON (${Buffer.byteLength(stored)} bytes, starting ${JSON.stringify(stored.slice(0, 24))})`;
  }
  if (typeof pin !== 'object' || pin === null) return 'not a JSON object';
  const record = pin as Partial<StoredPin>;
  if (typeof record.revision !== 'string') return 'without a revision';
  if (record.text !== null && typeof record.text !== 'string') return 'without the confirmed text';
  return undefined;
}

/**
 * The configuration a stored pin stands for. Throws `config_invalid` when the
 * stored text no longer validates (e.g. after an upgrade tightened the schema),
 * and `state_damaged` when the record cannot be read as a pin at all.
 */
export function decodePin(stored: string, configPath: string): { config: Config; revision: string } {
  const damage = pinDamage(stored);
  if (damage !== undefined) {
    throw new AssentError('state_damaged', `the confirmed configuration stored in the journal is damaged: ${damage}; review ${configPath}, then confirm it with \`assent config reload\``, {
      details: { reason: 'pin-damaged', damage },
    });
  }
  const pin = JSON.parse(stored) as StoredPin;
  if (pin.text === null) return { config: DEFAULT_CONFIG, revision: pin.revision };
  const inspected = inspectConfigText(String(pin.text));
  if (inspected.config === undefined) {
    throw new AssentError('config_invalid', `the confirmed configuration stored in the journal no longer validates; fix ${configPath}, then run \`assent config reload\``, {
      details: { problems: inspected.problems },
    });
  }
  return { config: inspected.config, revision: pin.revision };
}

/**
 * What runs while the stored confirmed configuration no longer validates (R-CFG-4
 * across an upgrade that tightened the rules): nothing the operator did not
 * confirm, and nothing open. No servers; every tool call is denied (`deny` for
 * destructive and non-destructive tools alike and for agent actions — shell
 * commands, paths and URLs with no rule and every default `deny` — and rules
 * never override `deny`); no handoff, no elicitation or terminal channel. Audit lines are
 * kept for the longest retention allowed, so this stand-in never prunes what
 * the operator's own configuration kept.
 */
export const FAIL_CLOSED_CONFIG: Config = Object.freeze({
  ...DEFAULT_CONFIG,
  servers: {},
  policy: {
    ...DEFAULT_CONFIG.policy,
    default: 'deny',
    destructive: 'deny',
    tools: {},
    agents: { default: 'deny', bookkeeping: 'deny' },
    // An agent's shell command, file access and fetch meet these before policy.agents.default: the built-in
    // rules (`ls *`, `touch *`, writes under the project…) would allow them, so none is kept and every default is deny.
    commands: { default: 'deny', rules: [], networkIntoShell: 'deny', confine: [] },
    paths: { read: 'deny', write: 'deny', rules: [] },
    urls: { default: 'deny', rules: [] },
  },
  channels: { elicitation: false, tty: false },
  approvals: { ...DEFAULT_CONFIG.approvals, handoff: false },
  auditRetentionDays: 3650,
}) as Config;

/** Why the daemon runs FAIL_CLOSED_CONFIG: the stored confirmed configuration and what is wrong with it. */
export interface InvalidConfirmedConfig {
  /** The revision the operator once confirmed; absent when the stored record does not even say. */
  revision?: string;
  problems: ConfigProblem[];
  /** One sentence for logs, status and events; names `assent config reload`. */
  message: string;
  /** Set when the stored record is damaged (empty, not JSON), rather than valid JSON a newer assent judges more strictly. */
  damaged?: string;
}

/** The configuration a daemon runs from its stored pin, with the path denial texts name as its source. */
export interface PinnedFromJournal {
  config: Config;
  revision: string;
  /** config.json, or a description of the fail-closed stand-in that names it. */
  path: string;
  /** Set when the stored pin no longer validates and FAIL_CLOSED_CONFIG runs instead. */
  invalid?: InvalidConfirmedConfig;
}

function summarize(problems: readonly ConfigProblem[]): string {
  const errors = problems.filter((p) => p.severity === 'error');
  const first = errors[0];
  if (first === undefined) return '';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return ` (${first.path === '' ? '(document)' : first.path}: ${first.message}${more})`;
}

/**
 * The configuration a daemon runs from the pin stored in its journal. Never
 * throws for a pin that no longer validates: the daemon must start, or the
 * operator could not run `assent config reload`, which needs it. It then runs
 * FAIL_CLOSED_CONFIG under a revision of its own (so config.json, whatever it
 * says, always differs from it and `assent config reload` shows the diff from
 * the fail-closed state), and `invalid` says why.
 */
export function pinFromJournal(stored: string, configPath: string, journalPath = 'the journal'): PinnedFromJournal {
  try {
    return { ...decodePin(stored, configPath), path: configPath };
  } catch (error) {
    if (!(error instanceof AssentError) || (error.type !== 'config_invalid' && error.type !== 'state_damaged')) throw error;
    const damage = error.type === 'state_damaged' ? String(error.details?.['damage'] ?? 'unreadable') : undefined;
    let revision: string | undefined;
    try {
      const parsed = JSON.parse(stored) as Partial<StoredPin> | null;
      if (typeof parsed?.revision === 'string') revision = parsed.revision;
    } catch {
      revision = undefined;
    }
    const detailed = error.details?.['problems'];
    const problems: ConfigProblem[] = Array.isArray(detailed) ? (detailed as ConfigProblem[]) : [{ severity: 'error', path: '', message: error.message }];
    const what =
      damage === undefined
        ? `the configuration last confirmed with the daemon (kept in the journal${revision === undefined ? '' : `, revision ${revision}`}) no longer validates with this version of assent${summarize(problems)}`
        : `the configuration last confirmed with the daemon, kept in ${journalPath} (meta key ${PINNED_CONFIG_KEY}), is damaged: ${damage}`;
    const message =
      `${what}; ` +
      `the daemon runs fail-closed (no servers, every tool call and agent action denied) until you review and confirm ${configPath} with \`assent config reload\` in your terminal ` +
      '(fix what `assent config check` reports first)';
    const invalid: InvalidConfirmedConfig = { problems, message };
    if (damage !== undefined) invalid.damaged = damage;
    if (revision !== undefined) invalid.revision = revision;
    return {
      config: FAIL_CLOSED_CONFIG,
      revision: nativeDigestOf({ failClosed: true, confirmedRevision: revision ?? null }),
      path: `the fail-closed stand-in for the confirmed configuration of ${configPath}, which ${damage === undefined ? 'no longer validates' : 'is damaged'} (\`assent config reload\` replaces it)`,
      invalid,
    };
  }
}

export type ConfirmedConfigRead =
  | { ok: true; config: Config; revision: string }
  /**
   * `why` says in one sentence what was missing or broken; `invalid` is set
   * when a confirmed configuration is stored but no longer validates.
   */
  | { ok: false; why: string; invalid?: boolean };

/**
 * Reads the confirmed configuration without a daemon: the journal is opened
 * read-only and never migrated. Never throws; a missing journal, a journal
 * without a pin or a pin that does not validate comes back as `ok: false`.
 */
export function readConfirmedConfig(journalPath: string, configPath: string): ConfirmedConfigRead {
  try {
    const stored = readJournalMeta(journalPath, PINNED_CONFIG_KEY);
    if (stored === undefined) return { ok: false, why: `the journal ${journalPath} holds no confirmed configuration yet` };
    return { ok: true, ...decodePin(stored, configPath) };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return error instanceof AssentError && (error.type === 'config_invalid' || error.type === 'state_damaged') ? { ok: false, why, invalid: true } : { ok: false, why };
  }
}
