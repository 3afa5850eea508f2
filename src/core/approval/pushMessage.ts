// What a push says about waiting approvals (R-REM-4): who asks, the tool, the
// approval id, the host, its risk level (R-POL-10) and a link to the approval
// on the page. Built from those fields alone, so no argument, preview, code or
// credential can reach a push: the page shows those after pairing. Pure.
import { RISK_LEVELS, type RiskFlag, type RiskLevel } from './approvalRisk.js';
import { escapeText } from '../base/escape.js';

/** One approval request as a push announces it. */
export interface PushItem {
  approvalId: string;
  /** The agent of an agent action (`claude-code`); absent for a gateway call. */
  agent?: string;
  /** The server alias of a gateway call, or the agent's tool alias (`claude`). */
  server?: string;
  /** The tool; absent for an exec action. */
  tool?: string;
  /**
   * The approval's risk level and the flags that raised it to that level
   * (R-POL-10): assent's own words, never the details naming programs or
   * gate files, so nothing of the command reaches a push.
   */
  risk?: { level: RiskLevel; flags: RiskFlag[] };
}

export interface PushContext {
  /** `host.name`, else the OS host name. */
  host: string;
  /** The page's root URL (`web.publicUrl`, else the listen URL). */
  pageUrl: string;
  /** Requests in the burst beyond `items`, counted but not named (the notifier bounds what it keeps). */
  unnamed?: number;
}

/** Lines of a message that carry a link; ids past this are still named, on one line. */
const LINKED_LINES = 10;

/** `pageUrl#/approvals/<id>`: the deep link the page opens (R-REM-5). */
export function approvalLink(pageUrl: string, approvalId: string): string {
  try {
    const url = new URL(pageUrl);
    url.hash = `/approvals/${encodeURIComponent(approvalId)}`;
    return url.href;
  } catch {
    return `${pageUrl.replace(/#.*$/, '')}#/approvals/${encodeURIComponent(approvalId)}`;
  }
}

function pageRoot(pageUrl: string): string {
  return pageUrl.replace(/#.*$/, '');
}

/** "claude-code claude/Bash", "fs/write_file" or "an exec action", escaped: names come from agents and upstream servers. */
function subjectOf(item: PushItem): string {
  const tool = item.tool === undefined ? 'an exec action' : item.server === undefined ? item.tool : `${item.server}/${item.tool}`;
  return escapeText(item.agent === undefined ? tool : `${item.agent} ${tool}`);
}

/** `risk high (privilege escalation): ` — the level first, as in every view; empty when none was recorded. */
function riskPrefix(item: PushItem): string {
  if (item.risk === undefined) return '';
  return item.risk.flags.length === 0 ? `risk ${item.risk.level}: ` : `risk ${item.risk.level} (${item.risk.flags.join(', ')}): `;
}

/** The highest level among the items, for a burst's title. */
function highestLevel(items: readonly PushItem[]): RiskLevel | undefined {
  let highest: RiskLevel | undefined;
  for (const item of items) {
    if (item.risk !== undefined && (highest === undefined || RISK_LEVELS.indexOf(item.risk.level) > RISK_LEVELS.indexOf(highest))) highest = item.risk.level;
  }
  return highest;
}

function summaryTitle(items: readonly PushItem[], ctx: PushContext): string {
  const total = items.length + (ctx.unnamed ?? 0);
  const [first] = items;
  if (total === 1 && first !== undefined) return `assent: ${first.risk === undefined ? '' : `risk ${first.risk.level}: `}${subjectOf(first)} waits for approval on ${escapeText(ctx.host)}`;
  const highest = highestLevel(items);
  return `assent: ${highest === undefined ? '' : `highest risk ${highest}: `}${total} approvals waiting on ${escapeText(ctx.host)}`;
}

/** One line per approval (the first few with their link), then the other ids; `escape` is for the text around links. */
function textLines(items: readonly PushItem[], ctx: PushContext, link: (item: PushItem) => string, escape: (text: string) => string = (text) => text): string[] {
  const lines = items.slice(0, LINKED_LINES).map((item) => `${escape(`${item.approvalId}: ${riskPrefix(item)}${subjectOf(item)} on ${escapeText(ctx.host)} `)}${link(item)}`);
  const rest = items.slice(LINKED_LINES).map((item) => item.approvalId);
  if (rest.length > 0) lines.push(`also waiting: ${rest.join(', ')}`);
  if ((ctx.unnamed ?? 0) > 0) lines.push(`and ${ctx.unnamed} more; run assent pending`);
  return lines;
}

/** The ntfy JSON publish body (POST to the server's root): a title, a message, a click link and an Open button. */
export function ntfyPublishBody(topic: string, items: readonly PushItem[], ctx: PushContext): Record<string, unknown> {
  const [first] = items;
  const single = items.length === 1 && (ctx.unnamed ?? 0) === 0 && first !== undefined;
  const click = single ? approvalLink(ctx.pageUrl, first.approvalId) : pageRoot(ctx.pageUrl);
  return {
    topic,
    title: summaryTitle(items, ctx),
    message: textLines(items, ctx, (item) => approvalLink(ctx.pageUrl, item.approvalId)).join('\n'),
    tags: ['lock'],
    priority: 4,
    click,
    actions: [{ action: 'view', label: single ? 'Open' : 'Open pending', url: click, clear: true }],
  };
}

/** The webhook's `json` format: one document naming every approval in the burst. */
export function webhookJsonBody(items: readonly PushItem[], ctx: PushContext): Record<string, unknown> {
  return {
    type: 'approvals_waiting',
    host: ctx.host,
    page: pageRoot(ctx.pageUrl),
    count: items.length + (ctx.unnamed ?? 0),
    approvals: items.map((item) => {
      const entry: Record<string, unknown> = { id: item.approvalId };
      if (item.agent !== undefined) entry['agent'] = item.agent;
      if (item.server !== undefined) entry['server'] = item.server;
      if (item.tool !== undefined) entry['tool'] = item.tool;
      if (item.risk !== undefined) entry['risk'] = { level: item.risk.level, flags: item.risk.flags };
      entry['host'] = ctx.host;
      entry['link'] = approvalLink(ctx.pageUrl, item.approvalId);
      return entry;
    }),
    text: summaryTitle(items, ctx),
  };
}

/** Slack's mrkdwn needs &, < and > escaped; everything else is already terminal-safe. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The webhook's `slack` format: an incoming-webhook `{text}` message with a link per approval. */
export function slackWebhookBody(items: readonly PushItem[], ctx: PushContext): Record<string, unknown> {
  const lines = textLines(items, ctx, (item) => `<${approvalLink(ctx.pageUrl, item.approvalId)}|open ${item.approvalId}>`, slackEscape);
  return { text: [slackEscape(summaryTitle(items, ctx)), ...lines].join('\n') };
}
