// Config revision pinning (R-CFG-4): the daemon reports a changed config.json
// and applies it only when the operator confirms the reviewed revision.
import { z } from 'zod';
import { diffPolicy } from '../core/config/configDiff.js';
import { withoutJournalSecret } from '../core/config/journalConfig.js';
import { AssentError } from '../core/base/errors.js';
import { inspectConfigFile, loadConfigFile } from '../journal/configFile.js';
import type { InvalidConfirmedConfig } from '../journal/confirmedConfig.js';
import type { ApprovalService } from '../service/approvalService.js';
import { defineOperation, type Operation } from './operation.js';

export interface ConfigOperationDeps {
  service: ApprovalService;
  configPath: string;
  /** Persists the confirmed revision so a restart runs it (R-CFG-4). */
  onApplied?: (pin: { revision: string; text: string | null }) => void;
  /** Set while the daemon runs fail-closed because the stored confirmed configuration no longer validates. */
  confirmedInvalid?: () => InvalidConfirmedConfig | undefined;
}

const ProblemSchema = z.object({ severity: z.enum(['error', 'warning']), path: z.string(), message: z.string() });

const ConfigStatusSchema = z.object({
  path: z.string(),
  pinnedRevision: z.string(),
  fileRevision: z.string(),
  changed: z.boolean(),
  diff: z.array(z.string()),
  problems: z.array(ProblemSchema),
  /** Present while the daemon runs fail-closed: the confirmed configuration it was given no longer validates; `diff` is from the fail-closed state. */
  confirmedInvalid: z.object({ revision: z.string().optional(), problems: z.array(ProblemSchema), message: z.string() }).optional(),
});

export function configOperations(deps: ConfigOperationDeps): Operation[] {
  const status = (): z.infer<typeof ConfigStatusSchema> => {
    const loaded = inspectConfigFile(deps.configPath);
    const pinned = deps.service.config;
    const invalid = deps.confirmedInvalid?.();
    return {
      path: deps.configPath,
      pinnedRevision: pinned.revision,
      fileRevision: loaded.revision,
      changed: loaded.revision !== pinned.revision,
      diff: loaded.revision === pinned.revision || loaded.config === undefined ? [] : diffPolicy(pinned.config, loaded.config),
      problems: loaded.problems,
      ...(invalid === undefined ? {} : { confirmedInvalid: invalid }),
    };
  };
  return [
    defineOperation({
      name: 'config.get',
      summary: 'The configuration the daemon pinned (servers, policy, channels) and its revision; gateways start from it (R-D-5).',
      params: z.strictObject({}),
      result: z.object({ revision: z.string(), path: z.string(), config: z.record(z.string(), z.unknown()) }),
      class: 'read',
      exposure: {
        cli: { rationale: 'operators read config.json itself; `assent config reload` shows what differs from the pinned revision' },
        rpc: true,
        http: { rationale: 'server entries may carry credentials in env; only the local 0600 socket serves them' },
        mcp: { rationale: 'server entries may carry credentials in env; never shown to a model' },
      },
      // The journal URL's password stays in the daemon (R-TEAM-7).
      handler: async () => ({ revision: deps.service.config.revision, path: deps.configPath, config: withoutJournalSecret(deps.service.config.config) as unknown as Record<string, unknown> }),
    }),
    defineOperation({
      name: 'config.status',
      summary: 'The pinned config revision, the revision on disk, and the policy diff between them.',
      params: z.strictObject({}),
      result: ConfigStatusSchema,
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async () => status(),
    }),
    defineOperation({
      name: 'config.apply',
      summary: 'Apply the reviewed revision of config.json (after the terminal challenge of `assent config reload`).',
      params: z.strictObject({ revision: z.string().min(1).max(200) }),
      result: z.object({ revision: z.string(), applied: z.boolean() }),
      class: 'human-decision',
      exposure: {
        cli: true,
        rpc: true,
        http: { rationale: 'widening policy from a browser tab is not offered; reload at the terminal' },
        mcp: { rationale: 'human-decision operations are never exposed to a model-driven head (R-OPS-3)' },
      },
      handler: async (params) => {
        const current = status();
        if (current.problems.some((p) => p.severity === 'error')) {
          throw new AssentError('config_invalid', `${deps.configPath} has errors; run \`assent config check\``, { details: { problems: current.problems } });
        }
        if (current.fileRevision !== params.revision) {
          throw new AssentError('conflict', `${deps.configPath} changed again after you reviewed it; run \`assent config reload\` again to review the new version`);
        }
        if (!current.changed) return { revision: current.pinnedRevision, applied: false };
        const loaded = loadConfigFile(deps.configPath);
        // The file is read again to apply it; only the exact revision the operator reviewed may be applied.
        if (loaded.revision !== params.revision) {
          throw new AssentError('conflict', `${deps.configPath} changed while it was being applied; run \`assent config reload\` again to review the new version`);
        }
        await deps.service.applyConfig({ config: loaded.config, revision: loaded.revision, path: deps.configPath });
        deps.onApplied?.({ revision: loaded.revision, text: loaded.text ?? null });
        return { revision: loaded.revision, applied: true };
      },
    }),
  ];
}
