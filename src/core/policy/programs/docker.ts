// The docker CLI's listing forms (docker 28, from `docker … --help`): ps,
// images, image ls, container ls, inspect, logs, version, info, stats
// --no-stream, network ls and volume ls. They ask the daemon and print; Go
// templates given with --format have no file or environment functions.
// Refused: the global --config, -c/--context and -H/--host (they point the
// client at other configuration or another daemon), stats without
// --no-stream (it never ends), and every other subcommand (run, exec, cp,
// build, …) by not being modelled. Global options come before the
// subcommand; pflag matches long names exactly.
import type { ShellWord } from '../shellCommand.js';
import { judgeModel, judgeValues, refusedOption, refusedVerdict } from './judgeModel.js';
import { parseOptions } from './optionParser.js';
import { flags, opt, type OptionSpec, type OptionSyntax, type ProgramModel, type WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

const PFLAG: OptionSyntax = { long: 'exact', permute: true, shortEquals: true };
const ELSEWHERE = 'points the client at another configuration or daemon';

export const DOCKER_GLOBAL: ProgramModel = {
  name: 'docker',
  syntax: { ...PFLAG, permute: false },
  operandsBeforeCommand: 0,
  options: [
    ...flags('D|debug', 'tls', 'tlsverify', 'v|version', 'help'),
    opt('l|log-level='),
    opt('tlscacert=', { value: 'read-path' }),
    opt('tlscert=', { value: 'read-path' }),
    opt('tlskey=', { value: 'read-path' }),
    ...['config=', 'c|context=', 'H|host='].map((names) => opt(names, { refuse: ELSEWHERE })),
  ],
  plan: () => ({ kinds: [] }),
};

const FORMAT = opt('format=', { value: 'inert' });
const FILTER = opt('f|filter=', { value: 'inert' });

function listing(name: string, max: number, options: readonly OptionSpec[], plan?: ProgramModel['plan']): ProgramModel {
  return {
    name,
    syntax: PFLAG,
    options: [...options, opt('help')],
    plan: plan ?? ((_options, operands) => ({ kinds: operands.slice(0, max).map((): WordKind => 'inert') })),
  };
}

const MANY = Number.POSITIVE_INFINITY;
const PS_OPTIONS = [...flags('a|all', 'l|latest', 'no-trunc', 'q|quiet', 's|size'), FILTER, FORMAT, opt('n|last=')];
const IMAGES_OPTIONS = [...flags('a|all', 'digests', 'no-trunc', 'q|quiet', 'tree'), FILTER, FORMAT];

export const DOCKER_MODELS: readonly ProgramModel[] = [
  listing('docker ps', 0, PS_OPTIONS),
  listing('docker container ls', 0, PS_OPTIONS),
  listing('docker images', 1, IMAGES_OPTIONS),
  listing('docker image ls', 1, IMAGES_OPTIONS),
  listing('docker inspect', MANY, [opt('f|format=', { value: 'inert' }), opt('s|size'), opt('type=')]),
  listing('docker logs', 1, [...flags('details', 'f|follow', 't|timestamps'), opt('since='), opt('n|tail='), opt('until=')]),
  listing('docker version', 0, [opt('f|format=', { value: 'inert' })]),
  listing('docker info', 0, [opt('f|format=', { value: 'inert' })]),
  listing('docker stats', MANY, [...flags('a|all', 'no-stream', 'no-trunc'), FORMAT], (options, operands) => {
    if (!options.has('--no-stream', '--help')) return { kinds: [], refused: { reason: 'docker stats without --no-stream streams until it is stopped' } };
    return { kinds: operands.map((): WordKind => 'inert') };
  }),
  listing('docker network ls', 0, [FILTER, FORMAT, ...flags('no-trunc', 'q|quiet')]),
  listing('docker volume ls', 0, [FILTER, FORMAT, ...flags('cluster', 'q|quiet')]),
];

const MODELS: ReadonlyMap<string, ProgramModel> = new Map(DOCKER_MODELS.map((m) => [m.name.slice(7), m]));
/** Other names the CLI gives the same commands. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['container list', 'container ls'],
  ['container ps', 'container ls'],
  ['image list', 'image ls'],
  ['network list', 'network ls'],
  ['volume list', 'volume ls'],
  ['system info', 'info'],
]);
const GROUPS = new Set(['container', 'image', 'network', 'volume', 'system']);

export function judgeDocker(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const parsed = parseOptions(args, DOCKER_GLOBAL.syntax, DOCKER_GLOBAL.options, 0);
  if (parsed.refused !== undefined) return refusedVerdict('docker', parsed.refused);
  const refusal = refusedOption(parsed.options);
  if (refusal !== undefined) return refusedVerdict('docker', refusal);
  const verdict: ProgramVerdict = { model: 'docker', reads: [], writes: [], trees: [] };
  const valueRefusal = judgeValues(verdict, parsed.options, assigned);
  if (valueRefusal !== undefined) return refusedVerdict('docker', valueRefusal);
  const rest = parsed.rest ?? [];
  const [first, second] = rest;
  if (first === undefined) return verdict;
  if (!first.static || (GROUPS.has(first.text) && second !== undefined && !second.static)) return refusedVerdict('docker', { reason: 'the subcommand is not statically known' });
  const depth = GROUPS.has(first.text) ? 2 : 1;
  const written = depth === 2 ? `${first.text} ${second?.text ?? ''}`.trim() : first.text;
  const model = MODELS.get(ALIASES.get(written) ?? written);
  if (model === undefined) return refusedVerdict(`docker ${written}`, { reason: `docker ${written} is not one of the listing forms this model describes` });
  const sub = judgeModel(model, rest.slice(depth), assigned);
  if (sub.refused !== undefined) return sub;
  sub.reads.unshift(...verdict.reads);
  return sub;
}
