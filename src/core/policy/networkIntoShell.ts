// Network data into a shell or interpreter (R-POL-8, R-POL-10): `curl … | sh`,
// `bash <(wget …)`, `sh -c "$(curl …)"`. Each half may be allowed or prompt on
// its own; together they run code nobody has read, so the pair is a part of its
// own, decided by `policy.commands.networkIntoShell` (deny by default).
import type { PolicyPart } from './actionPlan.js';
import type { PolicyValue } from './policyValue.js';
import { commandBaseName, type ParsedShell, type SimpleCommand } from './shellCommand.js';

/** Programs whose output is what they fetched from the network. */
const FETCHERS: ReadonlySet<string> = new Set(['curl', 'wget', 'fetch', 'http', 'https', 'xh', 'aria2c', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'lynx', 'links', 'w3m', 'httpie']);

/** Programs that run the code they read: shells, interpreters, and the builtins that run a string. */
const RUNS_CODE = /^(sh|bash|zsh|dash|ksh|mksh|ash|yash|fish|csh|tcsh|pwsh|powershell|eval|source|\.|python[0-9.]*|pypy[0-9]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh|wish|osascript|Rscript|julia|awk|gawk|mawk|nawk)$/;

function nameOf(command: SimpleCommand): string | undefined {
  return commandBaseName(command.words[0]);
}

function runsCode(command: SimpleCommand | undefined): boolean {
  const name = command === undefined ? undefined : nameOf(command);
  return name !== undefined && RUNS_CODE.test(name);
}

/** The command that consumes `fetcher`'s output as code, if any: a later stage of its pipeline, or one whose word holds its substitution. */
function consumerOf(parsed: ParsedShell, index: number): SimpleCommand | undefined {
  const fetcher = parsed.commands[index] as SimpleCommand;
  const pipeline = fetcher.pipeline;
  if (pipeline !== undefined) {
    const later = parsed.commands.find((c) => c.pipeline?.id === pipeline.id && c.pipeline.stage > pipeline.stage && runsCode(c));
    if (later !== undefined) return later;
  }
  // Up the chain of substitutions: `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(echo "$(curl …)")"`.
  const seen = new Set<number>();
  let at = fetcher.inside;
  while (at !== undefined && !seen.has(at)) {
    seen.add(at);
    const outer = parsed.commands[at];
    if (outer === undefined) break;
    if (runsCode(outer)) return outer;
    // A substitution's output may be piped on: `echo "$(curl …)" | sh`.
    if (outer.pipeline !== undefined) {
      const { id, stage } = outer.pipeline;
      const later = parsed.commands.find((c) => c.pipeline?.id === id && c.pipeline.stage > stage && runsCode(c));
      if (later !== undefined) return later;
    }
    at = outer.inside;
  }
  return undefined;
}

/** A part for every network fetch whose data reaches a shell or interpreter. */
export function networkIntoShellParts(parsed: ParsedShell, decision: PolicyValue): PolicyPart[] {
  const parts: PolicyPart[] = [];
  parsed.commands.forEach((command, index) => {
    const name = nameOf(command);
    if (name === undefined || !FETCHERS.has(name)) return;
    const consumer = consumerOf(parsed, index);
    if (consumer === undefined) return;
    parts.push({
      kind: 'command',
      text: `${command.text} → ${consumer.text}`,
      decision,
      rule: 'policy.commands.networkIntoShell',
      reason: `data ${name} fetches from the network is run as code by ${nameOf(consumer) ?? 'a shell'}`,
    });
  });
  return parts;
}
