// `assent rules add|list|revoke` (R-POL-4, R-POL-6): auto-approval rules that
// turn matching prompt calls into allow. A rule widens what agents may do
// without asking, so adding one needs a fresh code typed at a real terminal.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import type { Rule } from '../../../core/policy/toolPolicy.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { readTerminalLine, requireInteractiveTerminal } from '../terminal.js';

interface RuleFlags extends JsonFlag {
  tool?: string;
  arg: string[];
  command?: string;
  path?: string;
  access?: string;
  url?: string;
  agent?: string;
  ttl?: string;
}

const FORMS = ['tool', 'command', 'path', 'url'] as const;
type Form = (typeof FORMS)[number];

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function usage(flag: string, message: string): AssentError {
  return new AssentError('usage', `${flag}: ${message}; nothing was added`, { details: { flag } });
}

/**
 * Checks every `rules add` flag the way the daemon will, before the preview
 * and the code: a person must not type a code for a rule that is then refused
 * (or, worse, learn of a typo only after confirming). Returns the rule's form;
 * throws `usage`.
 */
async function validateRuleFlags(options: RuleFlags): Promise<Form> {
  const { parseRuleArg } = await import('../../../core/policy/toolPolicy.js');
  const { checkAutoRule } = await import('../../../core/policy/autoApproval.js');
  const { parseTtl } = await import('../../../operations/ruleForms.js');
  const flag = (name: string, check: () => unknown): void => {
    try {
      check();
    } catch (error) {
      throw usage(name, error instanceof Error ? error.message : String(error));
    }
  };
  const given = FORMS.filter((form) => options[form] !== undefined);
  if (given.length !== 1) {
    throw new AssentError(
      'usage',
      `give exactly one of --tool, --command, --path and --url (${given.length === 0 ? 'none given' : `given: ${given.map((f) => `--${f}`).join(', ')}`}), e.g. --command "npm test"; nothing was added`,
    );
  }
  const form = given[0] as Form;
  if (form === 'tool') {
    const tool = options.tool as string;
    flag('--tool', () => {
      if (!/^[^/\s]+\/[^\s]+$/.test(tool)) {
        throw new AssentError('usage', `${JSON.stringify(tool)} is not a tool id; expected <server alias>/<tool name>, e.g. fs/read_file`);
      }
    });
    for (const arg of options.arg) flag('--arg', () => parseRuleArg(arg));
    if (options.agent !== undefined) throw usage('--agent', 'a --tool rule already names its agent in the tool id (claude/Bash); use --agent with --command, --path or --url');
    if (options.access !== undefined) throw usage('--access', 'belongs to a --path rule');
  } else {
    if (options.arg.length > 0) throw usage('--arg', 'argument matchers belong to a --tool rule');
    if (options.access !== undefined && form !== 'path') throw usage('--access', 'belongs to a --path rule');
    if (options.access !== undefined && !['read', 'write', 'any'].includes(options.access)) {
      throw usage('--access', `${JSON.stringify(options.access)} is not read, write or any`);
    }
    flag(`--${form}`, () => checkAutoRule({ [form]: options[form] }));
    if (options.agent !== undefined) flag('--agent', () => checkAutoRule({ [form]: options[form], agent: options.agent }));
  }
  if (options.ttl !== undefined) {
    const ttl = options.ttl;
    flag('--ttl', () => {
      if (parseTtl(ttl) <= 0) throw new AssentError('usage', `ttl "${ttl}" is zero; give a positive duration such as 30m, 8h or 7d`);
    });
  }
  return form;
}

/** What the rule will let through, in the words the confirmation shows. */
function describeNewRule(form: Form, options: RuleFlags): string {
  const who = options.agent === undefined ? 'for any agent' : `for ${escapeText(options.agent)} only`;
  const pattern = (text: string | undefined): string => escapeText(JSON.stringify(text ?? ''));
  switch (form) {
    case 'tool': {
      const matchers = options.arg.length === 0 ? 'any arguments' : options.arg.map((a) => escapeText(a)).join(' and ');
      return `prompt calls of ${escapeText(options.tool ?? '')} with ${matchers} will run without asking`;
    }
    case 'command':
      return (
        `simple commands matching ${pattern(options.command)} word for word (a final * matches any further words) will run without asking ` +
        `where the policy would ask, ${who}; every other part of a command line is still judged on its own`
      );
    case 'path': {
      const access = options.access === 'read' ? 'reads' : options.access === 'write' ? 'writes' : 'reads and writes';
      return `${access} of paths matching ${pattern(options.path)} (wherever a path resolves to, symlinks followed) will run without asking where the policy would ask, ${who}`;
    }
    case 'url':
      return `fetches of URLs matching ${pattern(options.url)} will run without asking where the policy would ask, ${who}`;
  }
}

function ruleParams(form: Form, options: RuleFlags): Record<string, unknown> {
  const params: Record<string, unknown> =
    form === 'tool' ? { tool: options.tool, args: options.arg } : { [form]: options[form], ...(options.agent === undefined ? {} : { agent: options.agent }) };
  if (form === 'path' && options.access !== undefined) params['access'] = options.access;
  if (options.ttl !== undefined) params['ttl'] = options.ttl;
  return params;
}

export function registerRuleCommands(program: Command): void {
  const rules = program.command('rules').description('Auto-approval rules: turn matching prompt calls into allow');
  rules
    .command('add')
    .description(
      'Add a rule, e.g. --tool fs/read_file --arg /path:prefix=/srv/data/ --ttl 8h, or for agent actions --command "npm test", --path "${cwd}/dist/**", --url "https://docs.example.com/*" [--agent codex]',
    )
    .option('--tool <id>', 'tool id <server>/<tool>')
    .option('--arg <matcher>', 'with --tool: argument matcher POINTER:prefix=VALUE or POINTER:equals=VALUE (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--command <pattern>', "a word pattern for one simple command of an agent's shell action, e.g. \"npm test\" or \"npm run *\"")
    .option('--path <glob>', 'a path glob for the files an agent action reads or writes, e.g. "${cwd}/dist/**" or "~/notes/**"')
    .option('--access <access>', 'with --path: read, write or any (default any)')
    .option('--url <glob>', 'a URL glob for the fetches of an agent action, e.g. "https://docs.example.com/*"')
    .option('--agent <agent>', 'with --command, --path or --url: only for claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline')
    .option('--ttl <duration>', 'expire after a duration such as 30m, 8h, 7d')
    .option('--json', 'print one JSON document')
    .action(async (options: RuleFlags) => {
      let form: Form;
      try {
        form = await validateRuleFlags(options);
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      }
      await withDaemon(options, async (client) => {
        // A rule widens what agents may do without asking: like approving, it needs a person
        // at a terminal typing a fresh code, so an agent's shell cannot add one (R-CLI-2, R-POL-4).
        requireInteractiveTerminal('`assent rules add`');
        const code = newApprovalCode((n) => randomBytes(n));
        const answer = await readTerminalLine({
          deadlineMs: 60_000,
          prompt:
            `Add a rule: ${describeNewRule(form, options)}.\n` +
            `It lasts ${options.ttl === undefined ? 'until you revoke it' : escapeText(options.ttl)}; deny still wins.\n` +
            `Type ${code} to add it, anything else cancels: `,
        });
        if (answer?.trim() !== code) {
          throw new AssentError('policy_denied', 'the code did not match; no rule was added', { details: { reason: 'confirmation-denied' } });
        }
        const rule = await client.call<{ id: string }>('rules.add', ruleParams(form, options));
        if (options.json) printJsonOk(rule);
        else out(`Added rule ${rule.id}.`);
      });
    });
  rules
    .command('list')
    .description('List rules')
    .option('--all', 'include revoked and expired rules')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag & { all?: boolean }) => {
      await withDaemon(options, async (client) => {
        const list = await client.call<Rule[]>('rules.list', { includeInactive: options.all === true });
        if (options.json) return printJsonOk(list);
        if (list.length === 0) return out('No rules.');
        const { describeRuleForm } = await import('../../../core/policy/autoApproval.js');
        for (const r of list) {
          const what =
            r.tool !== undefined
              ? `${escapeText(r.tool)}${r.args.length === 0 ? '' : `  ${r.args.map((a) => `${a.pointer}:${a.op}=${escapeText(a.value)}`).join(' ')}`}`
              : escapeText(describeRuleForm(r));
          const expiry = r.expiresAt === undefined ? '' : ` (${r.expiresAt <= Date.now() ? 'expired' : 'expires'} ${new Date(r.expiresAt).toISOString()})`;
          const state = r.revokedAt !== undefined ? ' (revoked)' : expiry;
          out(`${r.id}  ${what}${state}`);
        }
      });
    });
  rules
    .command('revoke <id>')
    .description('Revoke a rule')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const rule = await client.call('rules.revoke', { id });
        if (options.json) printJsonOk(rule);
        else out(`Revoked rule ${id}.`);
      });
    });
}
