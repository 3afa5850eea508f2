// The configuration the operator last confirmed (R-CFG-4), as the daemon keeps it
// in the journal's meta table. The daemon writes it; a gateway that finds no
// daemon reads it read-only, so an unconfirmed edit of config.json never decides.
import { DEFAULT_CONFIG, type Config } from '../core/config.js';
import { AssentError } from '../core/errors.js';
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

/**
 * The configuration a stored pin stands for. Throws `config_invalid` when the
 * stored text no longer validates (e.g. after an upgrade tightened the schema).
 */
export function decodePin(stored: string, configPath: string): { config: Config; revision: string } {
  let pin: StoredPin;
  try {
    pin = JSON.parse(stored) as StoredPin;
  } catch (cause) {
    throw new AssentError('config_invalid', `the confirmed configuration stored in the journal is not valid JSON; fix ${configPath}, then run \`assent config reload\``, { cause });
  }
  if (typeof pin !== 'object' || pin === null || typeof pin.revision !== 'string') {
    throw new AssentError('config_invalid', `the confirmed configuration stored in the journal has no revision; fix ${configPath}, then run \`assent config reload\``);
  }
  if (pin.text === null) return { config: DEFAULT_CONFIG, revision: pin.revision };
  const inspected = inspectConfigText(String(pin.text));
  if (inspected.config === undefined) {
    throw new AssentError('config_invalid', `the confirmed configuration stored in the journal no longer validates; fix ${configPath}, then run \`assent config reload\``, {
      details: { problems: inspected.problems },
    });
  }
  return { config: inspected.config, revision: pin.revision };
}

export type ConfirmedConfigRead =
  | { ok: true; config: Config; revision: string }
  /** `why` says in one sentence what was missing or broken. */
  | { ok: false; why: string };

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
    return { ok: false, why: error instanceof Error ? error.message : String(error) };
  }
}
