// The `action` command family (SPEC §6, §7): parse the two paths, run one flow,
// print its one JSON report on stdout, exit by R-EXEC-6. The family keeps its
// own exit codes, so bad arguments are handled here rather than by commander.
import type { Command } from 'commander';
import { BAD_ARGUMENTS_LINE, exitCodeForReport, refusalReport } from '../../../exec/report.js';
import type { ExecReport } from '../../../exec/report.js';
import { confirmActionFlow, runActionFlow } from '../../../exec/actionFlow.js';
import type { ActionPaths } from '../../../exec/actionFlow.js';
import { confirmDeadlineFromEnv } from '../../../channels/ttyChallenge.js';
import { ExitWith } from '../output.js';
import { runActionViaDaemon } from '../../../exec/daemonActionFlow.js';
import { connectForCli } from '../../daemon/clientConnection.js';
import { readProof } from '../proofFile.js';
import { registerActionMcpCommands } from './actionMcp.js';

const systemClock = { now: () => Date.now(), monotonic: () => performance.now() };

function writeReport(report: ExecReport): never {
  process.stdout.write(`${JSON.stringify(report)}\n`);
  throw new ExitWith(exitCodeForReport(report));
}

function badArguments(): never {
  process.stdout.write(BAD_ARGUMENTS_LINE);
  throw new ExitWith(1);
}

const USAGE = {
  run: 'Usage: assent action run [--via-daemon [--approval-proof - | --approval-proof-file FILE]] POLICY REQUEST\n\nRuns the exact action in REQUEST once when POLICY allows it; ask and deny are refused.\nWith --via-daemon an ask action waits for an operator\u2019s approval through the daemon (or uses a proof\nexported by `assent approve ID --export-proof FILE`, read from stdin or the file), then runs once.\nPrints one JSON report on stdout. Exit 0 only when the child ran and exited 0. See docs/exec.md.\n',
  confirm:
    'Usage: assent action confirm POLICY REQUEST\n       assent --action-exec-confirm POLICY REQUEST\n\nShows the complete action on this terminal and runs it once after you type "RUN <challenge>".\nstdin and stderr must be a terminal. Prints one JSON report on stdout. See docs/exec.md.\n',
};

/** `--help`/`-h` prints the usage and exits 0; it never mixes with a report. */
function helpRequested(raw: string[], which: keyof typeof USAGE): void {
  if (raw.length === 1 && (raw[0] === '--help' || raw[0] === '-h')) {
    process.stdout.write(USAGE[which]);
    throw new ExitWith(0);
  }
}

type ProofSource = { stdin: true } | { file: string };

/**
 * `--approval-proof` takes only `-` (stdin) and `--approval-proof-file` a path:
 * a proof itself is never accepted on the command line (R-J-7), and a wrong
 * value is refused without being echoed.
 */
function extractProofSource(raw: string[]): { rest: string[]; source: ProofSource | undefined } {
  const rest: string[] = [];
  let source: ProofSource | undefined;
  for (let i = 0; i < raw.length; i += 1) {
    const arg = raw[i] as string;
    if (arg === '--approval-proof' || arg === '--approval-proof-file') {
      const value = raw[i + 1];
      if (source !== undefined || value === undefined || value === '') badArguments();
      if (arg === '--approval-proof' && value !== '-') {
        process.stderr.write('assent: --approval-proof only accepts "-" (read the proof from stdin); a proof is never passed on the command line. Use --approval-proof-file FILE for a file.\n');
        badArguments();
      }
      source = arg === '--approval-proof' ? { stdin: true } : { file: value };
      i += 1;
    } else {
      rest.push(arg);
    }
  }
  return { rest, source };
}

/** Exactly two non-empty paths; the only flags are `--via-daemon` and a proof source on `run`. */
function parsePaths(raw: string[], allowViaDaemon: boolean): { paths: ActionPaths; viaDaemon: boolean; proofSource?: ProofSource } {
  helpRequested(raw, allowViaDaemon ? 'run' : 'confirm');
  const extracted = allowViaDaemon ? extractProofSource(raw) : { rest: raw, source: undefined };
  const viaDaemon = allowViaDaemon && extracted.rest.includes('--via-daemon');
  if (extracted.source !== undefined && !viaDaemon) badArguments();
  const positional = extracted.rest.filter((arg) => !(allowViaDaemon && arg === '--via-daemon'));
  if (positional.length !== 2 || positional.some((arg) => arg === '' || arg.startsWith('-'))) badArguments();
  const [policy, request] = positional as [string, string];
  return extracted.source === undefined ? { paths: { policy, request }, viaDaemon } : { paths: { policy, request }, viaDaemon, proofSource: extracted.source };
}

function family(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .argument('[args...]')
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true);
}

/** Registers the `action` commands on the program. */
export function registerActionCommands(program: Command): void {
  const action = program
    .command('action')
    .description('Run one exact process action from a policy file and a request file.')
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(() => badArguments());

  family(action, 'run', 'Run POLICY REQUEST when the policy allows it; ask and deny are refused.').action(async (raw: string[]) => {
    const { paths, viaDaemon, proofSource } = parsePaths(raw, true);
    if (viaDaemon) {
      let proof: string | undefined;
      if (proofSource !== undefined) {
        try {
          proof = readProof(proofSource);
        } catch (error) {
          process.stderr.write(`assent: ${(error as Error).message}\n`);
          writeReport(refusalReport('confirmation-unavailable'));
        }
      }
      const report = await runActionViaDaemon(paths, {
        connect: () => connectForCli(),
        signals: process,
        diagnose: (text) => process.stderr.write(text),
        ...(proof === undefined ? {} : { proof }),
      });
      writeReport(report);
    }
    const report = await runActionFlow(paths, {
      signals: process,
      diagnose: (text) => process.stderr.write(text),
    });
    writeReport(report);
  });

  family(action, 'confirm', 'Show the complete action and run it once after "RUN <challenge>" is typed in this terminal.').action(
    async (raw: string[]) => {
      const { paths } = parsePaths(raw, false);
      const report = await confirmActionFlow(paths, {
        clock: systemClock,
        input: process.stdin,
        output: process.stderr,
        signals: process,
        deadlineMs: confirmDeadlineFromEnv(process.env),
      });
      if (process.stdin.isTTY) process.stdin.destroy();
      writeReport(report);
    },
  );

  registerActionMcpCommands(action);
}
