// R-SH-14 on this host: whether an agent's command may run confined, and the
// command its hook runs instead — the original wrapped in the confined run's
// entry (dist/bin/assent-confine.js, what `assent confine` does without the
// CLI's start-up), naming the sandbox profile the decision was made for. The sandbox is
// checked once when the daemon starts; the profile is built per call.
import { fileURLToPath } from 'node:url';
import { isRewritingAgent, type AgentName } from '../../core/agent/agentAction.js';
import { AssentError } from '../../core/base/errors.js';
import type { Confinement } from '../../core/policy/agentPolicy.js';
import { buildSandboxProfile } from '../../exec/confine/sandboxProfile.js';
import { confinementStatus, sandboxStatus, type ConfinementStatus, type SandboxStatus } from '../../exec/confine/sandboxRun.js';
import type { Confiner } from '../../service/agentActions.js';
import { repositoryLocation } from '../../shell/gitRepository.js';

/** A single-quoted shell word: nothing inside is special but the quote itself. */
function singleQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface HostConfinerOptions {
  home: string;
  assentHome: string;
  assentSocket?: string;
  /** The node binary and dist/bin/assent-confine.js the rewritten command runs; default: this process's and this installation's. */
  node?: string;
  confineEntry?: string;
  /** Default: bwrap checked on the first call that could be confined (about 25 ms, once). */
  status?: SandboxStatus;
}

export interface HostConfiner extends Confiner {
  /** The sandbox as this daemon found it (checked once). */
  status(): ConfinementStatus;
}

export function hostConfiner(options: HostConfinerOptions): HostConfiner {
  let checked = options.status;
  const node = options.node ?? process.execPath;
  const confineEntry = options.confineEntry ?? fileURLToPath(new URL('../../bin/assent-confine.js', import.meta.url));
  return {
    status: () => confinementStatus((checked ??= sandboxStatus())),
    confinement(agent: AgentName): Confinement {
      const status = (checked ??= sandboxStatus());
      if (!status.available) return { available: false, why: status.reason };
      if (!isRewritingAgent(agent)) return { available: false, why: `the ${agent} hook cannot rewrite a command into its confined form` };
      return { available: true };
    },
    prepare(cwd: string, command: string) {
      try {
        const profile = buildSandboxProfile({
          cwd,
          home: options.home,
          assentHome: options.assentHome,
          ...(options.assentSocket === undefined ? {} : { assentSocket: options.assentSocket }),
          env: {},
          locateRepository: repositoryLocation,
        });
        const rewritten = [node, confineEntry, '--profile', profile.digest, '--command', command].map(singleQuote).join(' ');
        return { digest: profile.digest, command: rewritten };
      } catch (error) {
        if (error instanceof AssentError) return { why: error.message };
        throw error;
      }
    },
  };
}
