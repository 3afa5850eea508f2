// Several upstreams behind one client (R-MCP-2): initialize fanned out with the
// capabilities merged, list methods aggregated (tools named `<alias>__<tool>`),
// and every request that names a resource, prompt or task routed to the
// upstream that listed it. With one upstream none of this runs.
import { isPlainObject } from '../../core/base/plainObject.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { toAssentError } from '../../core/base/errors.js';
import { VERSION } from '../../version.js';
import type { Logger } from '../../service/logger.js';
import { TOOL_NAME_SEPARATOR, type RoutingRelay, type ToolRouter } from './relayPort.js';
import { UPSTREAM_UNAVAILABLE_CODE, type ListKey, type UpstreamLink } from './upstream.js';
import { RPC_INVALID_PARAMS, type WireMessage, type WireRequest } from './wire.js';

/** How long an upstream may take to answer `initialize` before the gateway says it is still waiting (issue 20). */
export const SLOW_INITIALIZE_MS = 5_000;

/**
 * Says on the gateway's log (stderr, default level) when `link` has not
 * answered `initialize` within SLOW_INITIALIZE_MS — a slow start (`npx -y`
 * fetching a package, a proxy in the way) is said while it lasts, not only when
 * it fails. Returns the function that ends the watch when the answer comes.
 */
export function watchSlowInitialize(link: UpstreamLink, log: Pick<Logger, 'warn'>): () => void {
  const timer = setTimeout(() => {
    const command = link.spec.url ?? [link.spec.command ?? '', ...(link.spec.args ?? [])].join(' ');
    log.warn(`upstream has not answered initialize within ${SLOW_INITIALIZE_MS / 1000} s; still waiting`, { server: link.alias, command });
  }, SLOW_INITIALIZE_MS);
  timer.unref?.();
  return () => clearTimeout(timer);
}

export class MultiUpstreamRouter implements ToolRouter {
  // Ownership learnt from list results.
  private readonly resourceOwner = new Map<string, UpstreamLink>();
  private templateOwners: Array<{ template: UriTemplate; link: UpstreamLink }> = [];
  private readonly promptOwner = new Map<string, UpstreamLink>();
  private readonly taskOwner = new Map<string, UpstreamLink>();
  private readonly aliasesLongestFirst: UpstreamLink[];

  constructor(private readonly relay: RoutingRelay) {
    this.aliasesLongestFirst = [...relay.links].sort((a, b) => b.alias.length - a.alias.length);
  }

  /** The upstream and its own tool name for a client-facing tool name; with one upstream the name is unchanged. */
  resolveTool(name: string): { link: UpstreamLink; tool: string } | undefined {
    if (!this.relay.multi) return { link: this.relay.first(), tool: name };
    for (const link of this.aliasesLongestFirst) {
      const prefix = link.alias + TOOL_NAME_SEPARATOR;
      if (name.startsWith(prefix) && name.length > prefix.length) return { link, tool: name.slice(prefix.length) };
    }
    return undefined;
  }

  async initializeAll(request: WireRequest): Promise<void> {
    const { links, log } = this.relay;
    const slow = links.map((link) => watchSlowInitialize(link, log));
    const outcomes = await Promise.allSettled(links.map((link, index) => link.request('initialize', request.params).finally(() => slow[index]?.())));
    const results: Array<{ link: UpstreamLink; result: Record<string, unknown> }> = [];
    outcomes.forEach((outcome, index) => {
      const link = links[index] as UpstreamLink;
      if (outcome.status === 'fulfilled') {
        link.adoptInitializeResult(outcome.value);
        results.push({ link, result: outcome.value });
      } else {
        log.error('upstream failed to initialize; its features are unavailable', { server: link.alias, error: outcome.reason });
        link.markDown(`failed to initialize (${toAssentError(outcome.reason).message})`);
      }
    });
    const firstResult = results[0];
    if (firstResult === undefined) {
      this.relay.fail(request.id, {
        code: UPSTREAM_UNAVAILABLE_CODE,
        message: 'No configured MCP server completed initialize; see the gateway stderr for each server\'s error and check config.json "servers".',
        data: { type: 'unavailable' },
      });
      return;
    }
    const protocolVersion = firstResult.result['protocolVersion'];
    const capabilities: Record<string, unknown> = {};
    const instructions: string[] = [];
    for (const { link, result } of results) {
      if (result['protocolVersion'] !== protocolVersion) {
        log.warn('upstreams negotiated different protocol versions', {
          server: link.alias,
          version: result['protocolVersion'],
          using: protocolVersion,
        });
      }
      mergeCapabilities(capabilities, link.capabilities);
      if (typeof result['instructions'] === 'string') instructions.push(`## ${link.alias}\n${result['instructions']}`);
    }
    this.relay.reply(request.id, {
      protocolVersion,
      capabilities,
      serverInfo: { name: 'assent', version: VERSION, title: `assent (${results.map((r) => r.link.alias).join(', ')})` },
      ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    });
  }

  /** Any request other than initialize, tools/list and tools/call. */
  route(request: WireRequest): void {
    const params = request.params ?? {};
    switch (request.method) {
      case 'ping':
        this.relay.reply(request.id, {});
        return;
      case 'resources/list':
        void this.aggregateList(request, request.method, 'resources');
        return;
      case 'resources/templates/list':
        void this.aggregateList(request, request.method, 'resourceTemplates');
        return;
      case 'prompts/list':
        void this.aggregateList(request, request.method, 'prompts');
        return;
      case 'logging/setLevel':
        void this.broadcastRequest(request, 'logging');
        return;
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        void this.routeTo(request, () => this.ownerOfUri(String(params['uri'])), `resource "${String(params['uri'])}"`);
        return;
      case 'prompts/get':
        void this.routeTo(request, () => this.ownerOfPrompt(String(params['name'])), `prompt "${String(params['name'])}"`);
        return;
      case 'completion/complete': {
        const ref = isPlainObject(params['ref']) ? params['ref'] : {};
        if (ref['type'] === 'ref/prompt') {
          void this.routeTo(request, () => this.ownerOfPrompt(String(ref['name'])), `prompt "${String(ref['name'])}"`);
        } else {
          void this.routeTo(request, () => this.ownerOfUri(String(ref['uri'])), `resource template "${String(ref['uri'])}"`);
        }
        return;
      }
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel': {
        const owner = this.taskOwner.get(String(params['taskId']));
        if (owner) this.relay.forward(owner, request, (response) => this.learnTask(owner, response));
        else
          this.relay.fail(request.id, {
            code: RPC_INVALID_PARAMS,
            message: `Unknown task "${String(params['taskId'])}": no configured server created it through this session.`,
          });
        return;
      }
      default: {
        // Not routable by content (e.g. tasks/list, future methods): the first live upstream answers.
        const link = this.relay.links.find((l) => l.alive) ?? this.relay.first();
        this.relay.forward(link, request, (response) => this.learnTask(link, response));
      }
    }
  }

  /** Remembers which upstream created a task, so tasks/get, tasks/result and tasks/cancel reach it. */
  learnTask(link: UpstreamLink, response: WireMessage): void {
    const task = response.result?.['task'];
    if (isPlainObject(task) && typeof task['taskId'] === 'string') this.taskOwner.set(task['taskId'], link);
  }

  private async routeTo(request: WireRequest, findOwner: () => Promise<UpstreamLink | undefined>, what: string): Promise<void> {
    const owner = await findOwner();
    if (owner === undefined) {
      this.relay.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message: `No configured MCP server offers ${what}; list it first (resources/list, resources/templates/list, prompts/list) and use a name from the result.`,
      });
      return;
    }
    this.relay.forward(owner, request);
  }

  private async ownerOfUri(uri: string): Promise<UpstreamLink | undefined> {
    const find = (): UpstreamLink | undefined =>
      this.resourceOwner.get(uri) ??
      this.templateOwners.find(({ template }) => template.toString() === uri || template.match(uri) !== null)?.link;
    let owner = find();
    if (owner === undefined) {
      await Promise.allSettled([this.collect('resources/list', 'resources'), this.collect('resources/templates/list', 'resourceTemplates')]);
      owner = find();
    }
    if (owner === undefined) {
      const candidates = this.relay.links.filter((l) => l.alive && l.capabilities['resources'] !== undefined);
      if (candidates.length === 1) owner = candidates[0];
    }
    return owner;
  }

  private async ownerOfPrompt(name: string): Promise<UpstreamLink | undefined> {
    if (!this.promptOwner.has(name)) await this.collect('prompts/list', 'prompts').catch(() => undefined);
    return this.promptOwner.get(name);
  }

  /** Answers a list request with every upstream's items (all pages; no cursor is returned). */
  async aggregateList(request: WireRequest, method: string, key: ListKey): Promise<void> {
    const items = await this.collect(method, key);
    const result: Record<string, unknown> = { [key]: items };
    if (key === 'tools') this.relay.appendOperationTools(request, result);
    this.relay.reply(request.id, result);
  }

  /** Every page of one list method from each upstream that has the capability, recording who owns what. */
  private async collect(method: string, key: ListKey): Promise<unknown[]> {
    const capability = key === 'resourceTemplates' ? 'resources' : key;
    const links = this.relay.links.filter((l) => l.alive && l.capabilities[capability] !== undefined);
    const pages = await Promise.allSettled(links.map((link) => link.requestAllPages(method, key)));
    const items: unknown[] = [];
    if (key === 'resourceTemplates') this.templateOwners = [];
    pages.forEach((outcome, index) => {
      const link = links[index] as UpstreamLink;
      if (outcome.status === 'rejected') {
        this.relay.log.warn('upstream list failed; its items are left out', { server: link.alias, method, error: outcome.reason });
        return;
      }
      for (const item of outcome.value) {
        if (!isPlainObject(item)) continue;
        if (key === 'tools') {
          link.learnTool(item);
          items.push({ ...item, name: `${link.alias}${TOOL_NAME_SEPARATOR}${String(item['name'])}` });
          continue;
        }
        if (key === 'resources' && typeof item['uri'] === 'string') this.resourceOwner.set(item['uri'], link);
        if (key === 'resourceTemplates' && typeof item['uriTemplate'] === 'string') {
          try {
            this.templateOwners.push({ template: new UriTemplate(item['uriTemplate']), link });
          } catch {
            this.relay.log.warn('unparsable resource template', { server: link.alias, uriTemplate: item['uriTemplate'] });
          }
        }
        if (key === 'prompts' && typeof item['name'] === 'string') {
          if (this.promptOwner.has(item['name']) && this.promptOwner.get(item['name']) !== link) {
            this.relay.log.warn('prompt name offered by several servers; the first one answers', { prompt: item['name'], server: link.alias });
            continue;
          }
          this.promptOwner.set(item['name'], link);
        }
        items.push(item);
      }
      if (key === 'tools') link.markToolsComplete();
    });
    return items;
  }

  /** Sends a request to every upstream with the capability and answers `{}` once all did. */
  private async broadcastRequest(request: WireRequest, capability: string): Promise<void> {
    const links = this.relay.links.filter((l) => l.alive && l.capabilities[capability] !== undefined);
    const outcomes = await Promise.allSettled(links.map((l) => l.request(request.method, request.params)));
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure !== undefined && outcomes.every((o) => o.status === 'rejected')) {
      this.relay.fail(request.id, { code: UPSTREAM_UNAVAILABLE_CODE, message: toAssentError(failure.reason).message, data: { type: 'unavailable' } });
      return;
    }
    this.relay.reply(request.id, {});
  }
}

/** Union of capability objects; a feature offered by any upstream is offered by the gateway. */
function mergeCapabilities(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(from)) {
    const existing = into[key];
    if (isPlainObject(existing) && isPlainObject(value)) mergeCapabilities(existing, value);
    else if (typeof existing === 'boolean' && typeof value === 'boolean') into[key] = existing || value;
    else if (existing === undefined) into[key] = isPlainObject(value) ? structuredClone(value) : value;
  }
}
