// `assent hook <agent> [--after]` as the argument parser knows it: for `assent
// --help` and `assent help hook`. The binary never gets here for a real hook
// run — bin/assent.ts hands `hook …` to the thin hook entry before the CLI loads
// (R-HOOK-8) — but `main(['hook', …])` does, and then delegates the same way.
import type { Command } from 'commander';

export function registerHookCommand(program: Command): void {
  program
    .command('hook')
    .description('Agent hook: read one hook event of Claude Code, Codex, Gemini CLI, Copilot CLI, Qwen Code, Factory Droid or Auggie (or of the OpenCode and Kilo plugin) on stdin and answer it (docs/agents.md)')
    .argument('<agent>', 'claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline')
    .option('--after', "the agent's after-tool event (PostToolUse, AfterTool): record the call's outcome")
    // `-h` reaches the hook, which blocks on it like on any bad argument (R-HOOK-4); `assent help hook` shows this text.
    .helpOption(false)
    .allowUnknownOption(true)
    .action(async (_agent: string, options: { after?: boolean }, command: Command) => {
      const { runHookProcess } = await import('../../hook/hookProcess.js');
      // Every word the parser did not consume goes to the hook, which blocks on anything unexpected (R-HOOK-4).
      await runHookProcess([...command.args, ...(options.after === true ? ['--after'] : [])]);
    });
}
