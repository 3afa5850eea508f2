// Command rules (R-SH-2, R-SH-3): the decision for one simple command from
// `policy.commands`, and why it is not statically known. Pure; the rules are
// compiled once per configuration.
import type { PolicyValue } from './policyValue.js';
import { atLeastPrompt, mostRestrictive } from './decisions.js';
import { AssentError } from '../base/errors.js';
import { isInertVariable } from './inertVariables.js';
import { DESCRIPTIVE_VARIABLES, judgeProgram, judgeVersion, modelDeclaresVariable, MODELLED_PROGRAMS } from './programs/index.js';
import type { ProgramVerdict } from './programs/programVerdict.js';
import { commandBaseName, type ShellAssignment, type ShellWord, type SimpleCommand } from './shellCommand.js';
import { compileWordPattern, literalAt, patternMatches, wordMatches, type WordMatcher, type WordPattern } from './wordPattern.js';

export interface CommandRuleConfig {
  match: string;
  decision: PolicyValue;
  /** Word globs: the rule does not match a command with any of these words after its literal prefix (`-o*`, `--output*`). */
  unless?: string[] | undefined;
  /** Command patterns the rule does not match (`assent pending *` for a rule that denies `assent *`). */
  except?: string[] | undefined;
  /** The command's operands are paths it reads, checked against `policy.paths`; `read-after-first` skips the first (grep's pattern). */
  operands?: 'read' | 'read-after-first' | undefined;
  /**
   * A program model (R-SH-6): the rule's allow holds only for the forms the
   * model accepts, and the model says which words are paths read or written.
   */
  model?: string | undefined;
}

export interface CommandsConfig {
  default: PolicyValue;
  rules: CommandRuleConfig[];
  /** Network data piped or substituted into a shell or interpreter (`curl … | sh`; R-POL-8). */
  networkIntoShell?: PolicyValue | undefined;
  /** Word patterns of commands that run project code: a prompt they match may run confined instead (R-SH-14). */
  confine?: string[] | undefined;
}

interface CompiledCommandRule {
  index: number;
  match: string;
  decision: PolicyValue;
  pattern: WordPattern;
  unless: WordMatcher[];
  except: WordPattern[];
  operands: CommandRuleConfig['operands'];
  model: string | undefined;
}

export interface CompiledCommands {
  default: PolicyValue;
  rules: CompiledCommandRule[];
  networkIntoShell: PolicyValue;
  /** Rules by their literal first word; `globbed` holds those whose first word is a glob. Same order as `rules`. */
  byName: ReadonlyMap<string, readonly CompiledCommandRule[]>;
  globbed: readonly CompiledCommandRule[];
  /** `policy.commands.confine`, compiled, in config order. */
  confine: readonly WordPattern[];
}

/** The verdict for one simple command's words (paths are judged apart). */
export interface CommandVerdict {
  decision: PolicyValue;
  rule: string;
  /** Why it is not statically known; non-empty makes it at least prompt. */
  reasons: string[];
  /** Words that the deciding allow rule says are read paths. */
  readOperands: ShellWord[];
  /** What the deciding rule's program model found (R-SH-6), when a model decided. */
  program?: ProgramVerdict;
}

/** The models a rule may name: one per program, and `version` (`PROGRAM --version` of any program). */
export const MODEL_NAMES: readonly string[] = Object.freeze([...MODELLED_PROGRAMS, 'version']);

/** Compiles one rule's globs; throws an AssentError naming the field that does not compile. */
export function compileCommandRule(rule: CommandRuleConfig, index: number): CompiledCommandRule {
  const field = (name: string, compile: () => unknown): void => {
    try {
      compile();
    } catch (error) {
      throw new AssentError('invalid_params', `${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  let pattern: WordPattern | undefined;
  field('match', () => (pattern = compileWordPattern(rule.match)));
  const unless: WordMatcher[] = [];
  (rule.unless ?? []).forEach((text, i) =>
    field(`unless.${i}`, () => {
      const compiled = compileWordPattern(text);
      if (compiled.words.length !== 1 || compiled.rest) throw new AssentError('invalid_params', `${JSON.stringify(text)} is not one word; "unless" lists single words such as "-o*"`);
      unless.push(compiled.words[0] as WordMatcher);
    }),
  );
  const except: WordPattern[] = [];
  (rule.except ?? []).forEach((text, i) => field(`except.${i}`, () => except.push(compileWordPattern(text))));
  if (rule.model !== undefined && !MODEL_NAMES.includes(rule.model)) {
    throw new AssentError('invalid_params', `model: ${JSON.stringify(rule.model)} is not a program model assent has; known: ${MODEL_NAMES.join(', ')}`);
  }
  return { index, match: rule.match, decision: rule.decision, pattern: pattern as WordPattern, unless, except, operands: rule.operands, model: rule.model };
}

export function compileCommands(config: CommandsConfig): CompiledCommands {
  const rules = config.rules.map((rule, index) => compileCommandRule(rule, index));
  const byName = new Map<string, CompiledCommandRule[]>();
  const globbed: CompiledCommandRule[] = [];
  for (const rule of rules) {
    const first = rule.pattern.words[0] as WordMatcher;
    if ('literal' in first) byName.set(first.literal, [...(byName.get(first.literal) ?? []), rule]);
    else globbed.push(rule);
  }
  const confine = (config.confine ?? []).map((source) => compileWordPattern(source));
  return { default: config.default, rules, networkIntoShell: config.networkIntoShell ?? 'deny', byName, globbed, confine };
}

/**
 * The rules that may match a command, in config order: those naming its first
 * word, or its base name (a deny or prompt rule's `rm` matches `/bin/rm`),
 * and those whose first word is a glob. Any other rule's first pattern word
 * cannot equal the command's, so it cannot match.
 */
function candidateRules(commands: CompiledCommands, words: readonly ShellWord[]): readonly CompiledCommandRule[] {
  const first = words[0];
  if (first === undefined || !first.static) return commands.globbed;
  const exact = commands.byName.get(first.text) ?? [];
  const slash = first.text.lastIndexOf('/');
  const base = slash < 0 ? [] : (commands.byName.get(first.text.slice(slash + 1)) ?? []);
  if (base.length === 0 && commands.globbed.length === 0) return exact;
  return [...new Set([...exact, ...base, ...commands.globbed])].sort((a, b) => a.index - b.index);
}

/**
 * Whether a prefix assignment of `command` may change what it runs or reads
 * (R-SH-3): any name off the positive list of inert variables, unless the
 * model of the program declares it and judges it itself.
 */
export function isRiskyPrefix(command: SimpleCommand, assignment: ShellAssignment): boolean {
  const value = assignment.value.static ? assignment.value.text : undefined;
  if (isInertVariable(assignment.name, value)) return false;
  return !modelDeclaresVariable(command.words, assignment.name, assignment.value);
}

/** Interpreters and the options after which their code comes (R-SH-3). */
function interpreterCodeIndex(words: readonly ShellWord[]): number | undefined {
  const name = commandBaseName(words[0]);
  if (name === undefined) return undefined;
  let flags: readonly string[];
  if (/^python[0-9.]*$/.test(name) || name === 'pypy' || name === 'pypy3') flags = ['-c'];
  else if (name === 'node' || name === 'nodejs' || name === 'bun' || name === 'deno') flags = ['-e', '--eval', '-p', '--print'];
  else if (/^perl[0-9.]*$/.test(name)) flags = ['-e', '-E'];
  else if (/^ruby[0-9.]*$/.test(name)) flags = ['-e'];
  else if (/^php[0-9.]*$/.test(name)) flags = ['-r'];
  else if (name === 'osascript') flags = ['-e'];
  else return undefined;
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    if (!word.static) continue;
    if (flags.includes(word.text)) return i + 1;
    if (word.text === '--') return undefined;
    // `-ne 'code'`, `-pe 'code'`: a cluster ending in the code flag
    if (/^-[A-Za-z]+$/.test(word.text) && flags.some((f) => f.length === 2 && word.text.endsWith(f[1] as string))) return i + 1;
  }
  return undefined;
}

/** Why a simple command is not statically known, beyond what the parser found. */
export function staticReasons(command: SimpleCommand): string[] {
  const reasons = [...command.unknown];
  const first = command.words[0];
  if (first !== undefined && !first.static) reasons.push(`the command name is not a literal (${first.why ?? first.text})`);
  const name = commandBaseName(first);
  if (name === 'source' || name === '.') reasons.push(`${name} runs the commands in a file`);
  for (const assignment of command.assignments) {
    if (isRiskyPrefix(command, assignment)) {
      reasons.push(`the assignment ${assignment.name}=… is not on the list of variables known to leave what a program reads and runs unchanged`);
    }
  }
  return reasons;
}

function operandsOf(words: readonly ShellWord[], skipFirst: boolean): ShellWord[] {
  const operands: ShellWord[] = [];
  let options = true;
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    if (options && word.static && word.text === '--') {
      options = false;
      continue;
    }
    if (options && word.static && word.text.length > 1 && word.text.startsWith('-')) continue;
    operands.push(word);
  }
  return skipFirst ? operands.slice(1) : operands;
}

function ruleMatches(rule: CompiledCommandRule, words: readonly ShellWord[]): boolean {
  if (!patternMatches(rule.pattern, words, rule.decision !== 'allow')) return false;
  if (rule.unless.length > 0) {
    for (let i = 1; i < words.length; i += 1) {
      if (i < rule.pattern.words.length && literalAt(rule.pattern, i)) continue;
      const word = words[i] as ShellWord;
      // A word the shell expands at run time may become any word: it never passes an `unless` (R-SH-5).
      if (!word.static) return false;
      if (rule.unless.some((m) => wordMatches(m, word))) return false;
    }
  }
  return !rule.except.some((pattern) => patternMatches(pattern, words, true));
}

/** The first word after the command name the shell expands at run time: a rule without a model cannot place it. */
function firstDynamicWord(words: readonly ShellWord[]): ShellWord | undefined {
  for (let i = 1; i < words.length; i += 1) if (!(words[i] as ShellWord).static) return words[i];
  return undefined;
}

/** What a matching allow rule is worth for this command: allow, or prompt with the reason the form is not one it may allow. */
interface RuleOutcome {
  decision: PolicyValue;
  reason?: string;
  program?: ProgramVerdict;
}

/** The named model's verdict on the words, or undefined when that model does not describe them (another program). */
function judgeByModel(model: string, words: readonly ShellWord[], assigned: ReadonlySet<string>, prefixes: ReadonlySet<string>): ProgramVerdict | undefined {
  if (model === 'version') return judgeVersion(words);
  if (commandBaseName(words[0]) !== model || (words[0] as ShellWord).text.includes('/')) return undefined;
  // Only variables that describe the session are inert text: any other one of the agent's environment
  // may hold an API key or token (why `env` and `printenv` are not allowed either).
  for (const word of words) {
    const secret = word.plainVars?.names.find((name) => !DESCRIPTIVE_VARIABLES.has(name));
    if (secret !== undefined) {
      return { model, refused: `${JSON.stringify(word.text)} is not statically known: $${secret} may hold a secret of the agent's environment (an API key, a token)`, reads: [], writes: [], trees: [] };
    }
  }
  return judgeProgram(words, assigned, prefixes);
}

function allowOutcome(rule: CompiledCommandRule, command: SimpleCommand, assigned: ReadonlySet<string>, programs: Map<string, ProgramVerdict | undefined>): RuleOutcome {
  if (rule.model !== undefined) {
    if (!programs.has(rule.model)) programs.set(rule.model, judgeByModel(rule.model, command.words, assigned, new Set(command.assignments.map((a) => a.name))));
    const program = programs.get(rule.model);
    if (program === undefined) return { decision: 'prompt', reason: `the ${rule.model} model does not describe this command` };
    if (program.refused !== undefined) return { decision: 'prompt', reason: `${program.model} model: ${program.refused}`, program };
    return { decision: 'allow', program };
  }
  const dynamic = firstDynamicWord(command.words);
  if (dynamic !== undefined) return { decision: 'prompt', reason: `${JSON.stringify(dynamic.text)} is not statically known (${dynamic.why ?? 'expanded at run time'}); a rule's match never matches it` };
  return { decision: 'allow' };
}

/**
 * Decides one simple command's words (R-SH-2): every matching rule is
 * considered and the most restrictive wins; no rule → `commands.default`.
 * What is not statically known is never allowed (R-SH-3, R-SH-5): an allow
 * becomes prompt — for a rule with a program model, unless every word fits the
 * model (R-SH-6); for one without, when any word is expanded at run time; for
 * interpreter code, unless the rule names that exact code. `assigned` are the
 * variables the command line assigns anywhere (R-SH-7).
 */
export function evaluateCommand(commands: CompiledCommands, command: SimpleCommand, extraReasons: readonly string[] = [], assigned: ReadonlySet<string> = new Set()): CommandVerdict {
  const reasons = [...staticReasons(command), ...extraReasons];
  const code = interpreterCodeIndex(command.words);
  const programs = new Map<string, ProgramVerdict | undefined>();
  let best: { decision: PolicyValue; rule: CompiledCommandRule; outcome?: RuleOutcome } | undefined;
  // Why a model rule whose words matched did not allow: said when nothing else decides.
  const modelReasons: string[] = [];
  for (const rule of candidateRules(commands, command.words)) {
    if (!ruleMatches(rule, command.words)) {
      const dynamic = rule.unless.length > 0 && patternMatches(rule.pattern, command.words, rule.decision !== 'allow') ? firstDynamicWord(command.words) : undefined;
      if (dynamic !== undefined) modelReasons.push(`${JSON.stringify(dynamic.text)} is not statically known (${dynamic.why ?? 'expanded at run time'}), so it never passes the "unless" of policy.commands.rules.${rule.index}`);
      continue;
    }
    let decision = rule.decision;
    let outcome: RuleOutcome | undefined;
    if (decision === 'allow') {
      outcome = allowOutcome(rule, command, assigned, programs);
      decision = outcome.decision;
      // A model describes the forms its rule allows and no others: outside them the rule has no say,
      // so a rule of the user's may still allow what the built-in model does not describe.
      if (rule.model !== undefined && decision !== 'allow') {
        if (outcome.reason !== undefined && !modelReasons.includes(outcome.reason)) modelReasons.push(outcome.reason);
        continue;
      }
    }
    if (decision === 'allow' && code !== undefined && !literalAt(rule.pattern, code)) decision = 'prompt';
    if (reasons.length > 0) decision = atLeastPrompt(decision);
    if (best === undefined || mostRestrictive(best.decision, decision) !== best.decision) best = outcome === undefined ? { decision, rule } : { decision, rule, outcome };
  }
  if (code !== undefined && (best === undefined || best.decision === 'prompt')) {
    reasons.push(`${commandBaseName(command.words[0]) ?? 'it'} runs a code string that no rule names exactly`);
  }
  if (best === undefined) {
    const decision = reasons.length > 0 || code !== undefined || modelReasons.length > 0 ? atLeastPrompt(commands.default) : commands.default;
    return { decision, rule: 'policy.commands.default', reasons: [...reasons, ...modelReasons], readOperands: [] };
  }
  const rule = best.rule;
  if (best.outcome?.reason !== undefined && best.decision !== 'deny') reasons.push(best.outcome.reason);
  const readOperands = best.decision === 'allow' && rule.model === undefined && rule.operands !== undefined ? operandsOf(command.words, rule.operands === 'read-after-first') : [];
  const label = rule.model === undefined ? '' : ` (model ${best.outcome?.program?.model ?? rule.model})`;
  const verdict: CommandVerdict = { decision: best.decision, rule: `policy.commands.rules.${rule.index} ${JSON.stringify(rule.match)}${label}`, reasons, readOperands };
  if (best.decision === 'allow' && best.outcome?.program !== undefined) verdict.program = best.outcome.program;
  return verdict;
}

/**
 * Whether an auto-approval rule's word pattern lets one simple command through
 * (R-POL-6): its words match the pattern exactly as an allow rule's would (a
 * command named by a path is not its base name), nothing about it is left for
 * the shell to decide (R-SH-3: no rule allows that), and interpreter code is
 * the exact literal the pattern names. `extraReasons` are the plan's own (an
 * earlier part that changes what runs, a wrapper's unknown directory).
 */
export function autoApprovalMatches(pattern: WordPattern, command: SimpleCommand, extraReasons: readonly string[]): boolean {
  if (extraReasons.length > 0 || staticReasons(command).length > 0) return false;
  if (!patternMatches(pattern, command.words, false)) return false;
  const code = interpreterCodeIndex(command.words);
  return code === undefined || literalAt(pattern, code);
}

/**
 * The `policy.commands.confine` pattern a command that runs project code
 * matches (R-SH-14), as its config key, or undefined. Matched as an
 * auto-approval rule's pattern is: exactly, and only when nothing about the
 * command is left for the shell to decide (R-SH-3).
 */
export function confineKey(commands: CompiledCommands, command: SimpleCommand, extraReasons: readonly string[]): string | undefined {
  const index = commands.confine.findIndex((pattern) => autoApprovalMatches(pattern, command, extraReasons));
  return index < 0 ? undefined : `policy.commands.confine.${index} ${JSON.stringify((commands.confine[index] as WordPattern).source)}`;
}
