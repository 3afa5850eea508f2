// The GitHub CLI's read-only forms (gh 2.60, from its cobra definitions):
// pr view|list|diff|checks|status, issue view|list|status, run view|list,
// repo view, release view|list, workflow view|list, search, status, auth
// status and api GET requests. They print what the GitHub API returns; gh
// resolves the repository from the git remotes of the cwd, so git's
// configuration there is checked as for git (R-SH-9). pflag matches long
// names exactly. Refused: -w/--web (runs a browser), auth token and auth
// status -t (print the token), --jq filters that read the environment (gh's
// jq has $ENV), pr checkout (git writes the pull request's files into the
// worktree), downloads (they write files), and api requests that are not a
// plain GET of a GitHub endpoint: -X other than GET, -f/-F/--input (a request
// body), --hostname or a full URL (another host), --verbose (prints the
// request's headers), and headers other than Accept. Every other subcommand
// is not modelled.
import type { ShellWord } from '../shellCommand.js';
import { jqFilterRefusal } from './jq.js';
import { judgeModel, refusedVerdict } from './judgeModel.js';
import { flags, opt, type OperandPlan, type OptionsSeen, type OptionSpec, type OptionSyntax, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

const PFLAG: OptionSyntax = { long: 'exact', permute: true, shortEquals: true };

const WEB = opt('w|web', { refuse: 'opens a web browser, another program' });
const REPO = opt('R|repo=');
/** AddJSONFlags: --json FIELDS, -q/--jq EXPRESSION, -t/--template TEMPLATE (Go templates: no file or environment functions). */
const JSON_FLAGS = [opt('json='), opt('q|jq='), opt('t|template=', { value: 'inert' })];
const HELP = opt('help');

/** The --jq filters must not read the environment: gh's jq (gojq) has env and $ENV. */
function jqRefusal(options: OptionsSeen): OperandPlan['refused'] {
  for (const filter of options.values('--jq')) {
    const why = filter.static ? jqFilterRefusal(filter.text) : `the --jq filter ${JSON.stringify(filter.text)} is not statically known`;
    if (why !== undefined) return { reason: `${why} (--jq)`, option: '--jq' };
  }
  return undefined;
}

/** A read-only subcommand: at most `max` operands (numbers, URLs, branches, names, query words), all inert. */
function readOnly(name: string, max: number, options: readonly OptionSpec[], check?: (options: OptionsSeen, operands: readonly ParsedOperand[]) => OperandPlan['refused']): ProgramModel {
  return {
    name,
    syntax: PFLAG,
    options: [...options, HELP],
    plan: (seen, operands) => {
      const refused = jqRefusal(seen) ?? check?.(seen, operands);
      if (refused !== undefined) return { kinds: [], refused };
      return { kinds: operands.slice(0, max).map((): WordKind => 'inert') };
    },
  };
}

const MANY = Number.POSITIVE_INFINITY;
const LIST = [opt('L|limit='), ...JSON_FLAGS];
const PR_FILTERS = ['B|base=', 'H|head=', 'l|label=', 'A|author=', 'app=', 'a|assignee=', 'S|search=', 's|state='].map((n) => opt(n, { value: 'inert' }));

const SEARCH_COMMON = [...JSON_FLAGS, WEB, opt('L|limit='), opt('order='), opt('sort=')];
/** Qualifier flags of `gh search issues` and `gh search prs`. */
const ISSUE_QUALIFIERS = [
  'app=', 'archived', 'assignee=', 'author=', 'closed=', 'commenter=', 'comments=', 'created=', 'match=', 'interactions=', 'involves=', 'visibility=',
  'label=', 'language=', 'locked', 'mentions=', 'milestone=', 'no-assignee', 'no-label', 'no-milestone', 'no-project', 'project=', 'reactions=',
  'R|repo=', 'state=', 'team-mentions=', 'updated=', 'owner=',
].map((n) => opt(n, { value: 'inert' }));

export const GH_MODELS: readonly ProgramModel[] = [
  readOnly('gh pr view', 1, [WEB, opt('c|comments'), ...JSON_FLAGS, REPO]),
  readOnly('gh pr list', 0, [WEB, ...LIST, ...PR_FILTERS, opt('d|draft'), REPO]),
  readOnly('gh pr diff', 1, [WEB, opt('color='), ...flags('patch', 'name-only'), REPO]),
  readOnly('gh pr checks', 1, [WEB, ...flags('watch', 'fail-fast', 'required'), opt('i|interval='), ...JSON_FLAGS, REPO]),
  readOnly('gh pr status', 0, [opt('c|conflict-status'), ...JSON_FLAGS, REPO]),
  readOnly('gh issue view', 1, [WEB, opt('c|comments'), ...JSON_FLAGS, REPO]),
  readOnly('gh issue list', 0, [WEB, ...LIST, ...['a|assignee=', 'l|label=', 's|state=', 'A|author=', 'app=', 'mention=', 'm|milestone=', 'S|search='].map((n) => opt(n, { value: 'inert' })), REPO]),
  readOnly('gh issue status', 0, [...JSON_FLAGS, REPO]),
  readOnly('gh run view', 1, [WEB, ...flags('v|verbose', 'exit-status', 'log', 'log-failed'), opt('j|job='), opt('a|attempt='), ...JSON_FLAGS, REPO]),
  // In run list, -w is --workflow.
  readOnly('gh run list', 0, [...LIST, ...['w|workflow=', 'b|branch=', 'u|user=', 'e|event=', 'created=', 'c|commit=', 's|status='].map((n) => opt(n, { value: 'inert' })), opt('a|all'), REPO]),
  readOnly('gh repo view', 1, [WEB, opt('b|branch=', { value: 'inert' }), ...JSON_FLAGS]),
  readOnly('gh release view', 1, [WEB, ...JSON_FLAGS, REPO]),
  readOnly('gh release list', 0, [...LIST, ...flags('exclude-drafts', 'exclude-pre-releases'), opt('O|order='), REPO]),
  readOnly('gh workflow list', 0, [...LIST, opt('a|all'), REPO]),
  readOnly('gh workflow view', 1, [WEB, opt('y|yaml'), opt('r|ref=', { value: 'inert' }), REPO]),
  readOnly('gh search repos', MANY, [
    ...SEARCH_COMMON,
    ...['archived', 'created=', 'followers=', 'include-forks=', 'forks=', 'good-first-issues=', 'help-wanted-issues=', 'match=', 'visibility=', 'language=', 'license=', 'updated=', 'size=', 'stars=', 'topic=', 'number-topics=', 'owner='].map((n) => opt(n, { value: 'inert' })),
  ]),
  readOnly('gh search issues', MANY, [...SEARCH_COMMON, ...ISSUE_QUALIFIERS, opt('include-prs')]),
  readOnly('gh search prs', MANY, [
    ...SEARCH_COMMON,
    ...ISSUE_QUALIFIERS,
    ...['B|base=', 'draft', 'H|head=', 'merged-at=', 'merged', 'review=', 'review-requested=', 'reviewed-by=', 'checks='].map((n) => opt(n, { value: 'inert' })),
  ]),
  readOnly('gh search commits', MANY, [
    ...SEARCH_COMMON,
    ...['author=', 'author-date=', 'author-email=', 'author-name=', 'committer=', 'committer-date=', 'committer-email=', 'committer-name=', 'hash=', 'merge', 'parent=', 'R|repo=', 'tree=', 'owner=', 'visibility='].map((n) => opt(n, { value: 'inert' })),
  ]),
  readOnly('gh search code', MANY, [...JSON_FLAGS, WEB, opt('L|limit='), ...['extension=', 'filename=', 'match=', 'language=', 'R|repo=', 'size=', 'owner='].map((n) => opt(n, { value: 'inert' }))]),
  readOnly('gh status', 0, [opt('o|org=', { value: 'inert' }), opt('e|exclude=', { value: 'inert' })]),
  readOnly('gh auth status', 0, [opt('a|active'), opt('h|hostname='), opt('t|show-token', { refuse: 'prints the auth token' })]),
  readOnly(
    'gh api',
    1,
    [
      opt('X|method='),
      opt('H|header=', { value: 'inert' }),
      opt('p|preview='),
      ...flags('i|include', 'slurp', 'paginate', 'silent'),
      opt('t|template=', { value: 'inert' }),
      opt('q|jq='),
      opt('cache='),
      opt('F|field=', { refuse: 'adds a parameter: a request body, or another method than GET' }),
      opt('f|raw-field=', { refuse: 'adds a parameter: a request body, or another method than GET' }),
      opt('input=', { refuse: 'sends a file as the request body' }),
      opt('hostname=', { refuse: 'sends the request to another host' }),
      opt('verbose', { refuse: "prints the full request and response, headers included" }),
    ],
    apiRefusal,
  ),
];

/** gh api: a GET of an endpoint of the configured GitHub host, with Accept headers only. */
function apiRefusal(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan['refused'] {
  for (const method of options.values('--method')) {
    if (!method.static || method.text.toUpperCase() !== 'GET') return { reason: `the method ${JSON.stringify(method.text)} is not GET: any other may change what is on GitHub`, option: '--method' };
  }
  for (const header of options.values('--header')) {
    if (!header.static || !/^accept\s*:/i.test(header.text)) return { reason: `the header ${JSON.stringify(header.text)} is not an Accept header`, option: '--header' };
  }
  const endpoint = operands[0]?.word;
  if (endpoint !== undefined && (!endpoint.static || endpoint.text.includes('://'))) {
    return { reason: `the endpoint ${JSON.stringify(endpoint.text)} is not a statically known path of the GitHub API (a full URL reaches another host)` };
  }
  return undefined;
}

const MODELS: ReadonlyMap<string, ProgramModel> = new Map(GH_MODELS.map((m) => [m.name.slice(3), m]));

/** Subcommands refused for what they do rather than for not being modelled. */
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['auth token', 'prints the auth token'],
  ['pr checkout', "fetches the pull request's branch and checks it out: git writes its files into the worktree, and a gate file (R-SH-9) may be among them"],
  ['run download', 'writes the artifacts of a run into files'],
  ['release download', 'writes the assets of a release into files'],
]);
const ONE_LEVEL = new Set(['status', 'api']);
/** Groups whose commands find the repository from the git remotes of the cwd. */
const IN_REPOSITORY = new Set(['pr', 'issue', 'run', 'release', 'workflow', 'repo', 'api']);

export function judgeGh(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const [group, sub] = args;
  if (group === undefined) return { model: 'gh', reads: [], writes: [], trees: [] };
  if (!group.static) return refusedVerdict('gh', { reason: `the subcommand ${JSON.stringify(group.text)} is not statically known` });
  if (args.length === 1 && (group.text === '--help' || group.text === '--version')) return { model: 'gh', reads: [], writes: [], trees: [] };
  const depth = ONE_LEVEL.has(group.text) ? 1 : 2;
  if (depth === 2 && sub !== undefined && !sub.static) return refusedVerdict(`gh ${group.text}`, { reason: `the subcommand ${JSON.stringify(sub.text)} is not statically known` });
  const name = depth === 1 ? group.text : `${group.text} ${sub?.text ?? ''}`.trim();
  const why = REFUSED.get(name);
  if (why !== undefined) return refusedVerdict(`gh ${name}`, { reason: `gh ${name} ${why}` });
  const model = MODELS.get(name);
  if (model === undefined) return refusedVerdict(`gh ${name}`, { reason: `gh ${name} is not one of the read-only forms this model describes` });
  const verdict = judgeModel(model, args.slice(depth), assigned);
  if (verdict.refused === undefined && IN_REPOSITORY.has(group.text)) verdict.repository = { chdir: [] };
  return verdict;
}
