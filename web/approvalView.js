// What the page shows of one approval (R-WEB-3, R-REM-5): who asks, on which
// host, in which cwd and session; why it asks and a risk line; a shell action's
// simple commands with their rules; a file edit as a diff; string arguments with
// newlines as multi-line blocks; and always the complete arguments as escaped
// JSON. Everything is text (textContent), never HTML, and every string from the
// daemon is escaped like the terminal's (R-TTY-3): control characters and every
// code unit >= U+007F show as \uXXXX, line by line in the multi-line blocks.
/* global document */

/** JSON with every code unit >= U+007F escaped; JSON.stringify already escapes C0 controls. */
export function escapedJson(value) {
  const text = JSON.stringify(value, null, 2);
  if (text === undefined) return 'null';
  return text.replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function escapeText(text) {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return String(text).replace(/[\u0000-\u001f\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An agent action (filed by an agent's hook): agent, cwd, kind and a shell command's text, from the caller the daemon recorded. */
export function agentActionOf(approval) {
  const caller = approval.caller ?? {};
  if (approval.kind !== 'tool' || caller.head !== 'hook' || typeof caller.agent !== 'string') return undefined;
  const command = approval.args && approval.args.command;
  return {
    agent: caller.agent,
    cwd: typeof caller.cwd === 'string' ? caller.cwd : undefined,
    kind: typeof caller.kind === 'string' ? caller.kind : undefined,
    command: caller.kind === 'shell' && typeof command === 'string' ? command : undefined,
    policy: isObject(caller.policy) && Array.isArray(caller.policy.parts) ? caller.policy : undefined,
    sessionGrant: typeof caller.sessionGrant === 'string' ? caller.sessionGrant : 'this exact input',
  };
}

export function titleOf(approval) {
  if (approval.kind === 'exec') return 'exec action';
  return `${approval.server}/${approval.tool}${agentActionOf(approval) ? ' (agent action)' : ''}`;
}

/** A text as lines, each escaped on its own, so a newline reads as a line break and nothing else is hidden. */
export function escapedLines(text) {
  return String(text).split('\n').map(escapeText);
}

/** A block of escaped lines; one line reads exactly as escapeText(text). */
function multiline(tag, props, text) {
  return el(tag, props, [escapedLines(text).join('\n')]);
}

function fact(label, value) {
  return el('span', { class: 'fact' }, [el('span', { class: 'label', text: label }), ` ${value}`]);
}

/**
 * Names for principals (R-TEAM-3) a person recognises: `user@host`, a token's
 * name, a browser by the name `assent web devices` shows (`ctx.devices`, id →
 * name); never a bare hash.
 */
export function principalName(principal, ctx = {}) {
  if (typeof principal !== 'string' || principal === '') return '';
  if (principal.startsWith('token:')) return `token "${escapeText(principal.slice(6))}"`;
  if (principal.startsWith('web:')) {
    const id = principal.slice(4);
    const name = ctx.devices instanceof Map ? ctx.devices.get(id) : undefined;
    if (typeof name === 'string' && name !== '') return `${escapeText(name)} (${escapeText(id)})`;
    return /^d[a-z]{5}$/.test(id) ? `browser ${id}` : 'a paired browser';
  }
  if (principal.startsWith('owner:')) return "this host's owner";
  return escapeText(principal);
}

const CHANNEL_WORDS = {
  web: 'via web page',
  cli: 'via assent approve in a terminal',
  watch: 'via assent watch',
  tty: "via the gateway's terminal",
  elicitation: "via the agent's own client (elicitation)",
  rule: 'by an auto-approval rule',
  session: 'by an earlier approval for the session',
};

export function channelWords(channel) {
  if (typeof channel !== 'string' || channel === '') return '';
  return CHANNEL_WORDS[channel] ?? `via ${escapeText(channel)}`;
}

const LIFECYCLE_WORDS = {
  consent_timeout: 'Expired: nobody decided in time',
  cancelled: 'Cancelled: the agent withdrew the request',
  withdrawn: 'Withdrawn by the agent',
  session_ended: "Denied: the agent's session ended first",
  shutdown: 'Denied: the daemon stopped first',
};

/** What became of an approval, in plain words. */
export function outcomeWords(approval) {
  if (approval.state === 'approved') return approval.scope === 'session' ? 'Approved for the session' : 'Approved once';
  if (approval.state === 'expired') return LIFECYCLE_WORDS.consent_timeout;
  const lifecycle = LIFECYCLE_WORDS[approval.reason];
  if (lifecycle !== undefined && approval.channel === undefined) return lifecycle;
  return 'Denied';
}

const AUDIT_OUTCOME_WORDS = {
  ok: 'ran',
  error: 'ran, and failed',
  denied: 'refused',
  consent_denied: 'denied by a person',
  consent_timeout: 'nobody answered in time',
  cancelled: 'cancelled',
  withdrawn: 'withdrawn by the agent',
  no_outcome: 'allowed; no outcome was reported',
  uncertain: 'unknown: the daemon stopped while it ran',
  started: 'started',
};

const DENIED_REASON_WORDS = {
  policy: 'by policy',
  approval_pending: 'until approved (handoff)',
  handoff_limit: 'too many handoff approvals pending',
};

/** An audit record's outcome in plain words. */
export function auditOutcomeWords(record) {
  const base = AUDIT_OUTCOME_WORDS[record.outcome] ?? escapeText(record.outcome ?? '');
  if (record.outcome !== 'denied' || typeof record.deniedReason !== 'string') return base;
  return `${base} ${DENIED_REASON_WORDS[record.deniedReason] ?? `(${escapeText(record.deniedReason)})`}`;
}

/** Local date and time for a timestamp (ISO text or ms). */
export function shortTime(ts) {
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? String(ts ?? '') : date.toLocaleString();
}

/** The host an approval was filed on: its own (team mode) when another host filed it, else this daemon's. */
function hostOf(approval, ctx) {
  if (typeof approval.host === 'string') return escapeText(approval.host);
  if (typeof approval.hostId === 'string' && ctx.hostId !== undefined && approval.hostId !== ctx.hostId) return `another host (${escapeText(approval.hostId.slice(0, 8))})`;
  return ctx.hostName === undefined ? '(unknown)' : escapeText(ctx.hostName);
}

/** Who asks: the agent of an agent action, else the MCP client the gateway served. */
function askerOf(approval) {
  const caller = approval.caller ?? {};
  if (typeof caller.agent === 'string') return escapeText(caller.agent);
  if (typeof caller.clientName === 'string') return `${escapeText(caller.clientName)}${typeof caller.clientVersion === 'string' ? ` ${escapeText(caller.clientVersion)}` : ''} (MCP client)`;
  return '(not given)';
}

/** Who asks, where and in which session; the countdown node is the caller's, kept live by the page. */
export function factsOf(approval, ctx, countdown) {
  const agent = agentActionOf(approval);
  return el('div', { class: 'meta facts' }, [
    fact('agent', askerOf(approval)),
    fact('host', hostOf(approval, ctx)),
    agent === undefined ? '' : fact('cwd', agent.cwd === undefined ? '(not given)' : escapeText(agent.cwd)),
    agent === undefined || agent.kind === undefined ? '' : fact('kind', escapeText(agent.kind)),
    fact('session', escapeText(approval.sessionId)),
    fact('id', approval.id),
    el('span', { class: 'fact' }, [el('span', { class: 'label', text: 'expires in' }), ' ', countdown]),
  ]);
}

/** Why a person is asked: the policy key (or rule) that said prompt. */
export function whyOf(approval) {
  const policy = isObject(approval.caller) ? approval.caller.policy : undefined;
  let text;
  if (isObject(policy) && typeof policy.key === 'string') text = `${escapeText(policy.key)} says ${escapeText(String(policy.decision ?? 'prompt'))}`;
  else if (approval.kind === 'exec') text = 'an exec action run through the daemon always asks';
  else text = 'the policy says prompt (no key recorded)';
  return el('p', { class: 'why' }, [el('span', { class: 'label', text: 'Why it asks:' }), ` ${text}`]);
}

const RISK_NOTE = 'a hint for you, not a guarantee';

/** The flag a reason starts with (`privilege escalation (sudo)` → `privilege escalation`), for its colour. */
function flagOfReason(reason, flags) {
  return flags.find((flag) => reason === flag || reason.startsWith(`${flag} (`)) ?? reason;
}

const flagChip = (text, flag) => el('span', { class: `flag flag-${flag.replace(/[^a-z]+/g, '-')}`, text: escapeText(text) });

/**
 * The risk line the daemon recorded (R-POL-10, R-REM-5): the level first
 * (`low`, `elevated`, `high`), then each reason as a chip. An approval filed
 * before levels were recorded carries only its flags; they are shown as they are.
 */
export function riskOf(approval) {
  const recorded = isObject(approval.caller) ? approval.caller.risk : undefined;
  const line = el('p', { class: 'risk', 'aria-label': 'Risk' }, [el('span', { class: 'label', text: 'Risk:' }), ' ']);
  if (Array.isArray(recorded)) {
    const flags = recorded.filter((flag) => typeof flag === 'string');
    if (flags.length === 0) line.append(`none flagged (${RISK_NOTE})`);
    else for (const flag of flags) line.append(flagChip(flag, flag), ' ');
    return line;
  }
  if (!isObject(recorded) || !['low', 'elevated', 'high'].includes(recorded.level)) {
    line.append('not assessed');
    return line;
  }
  const flags = Array.isArray(recorded.flags) ? recorded.flags.filter((flag) => typeof flag === 'string') : [];
  const reasons = Array.isArray(recorded.reasons) ? recorded.reasons.filter((reason) => typeof reason === 'string') : [];
  line.append(el('span', { class: `level level-${recorded.level}`, text: recorded.level }), ' ');
  if (reasons.length === 0) line.append(`nothing flagged (${RISK_NOTE})`);
  else for (const reason of reasons) line.append(flagChip(reason, flagOfReason(reason, flags)), ' ');
  return line;
}

/** How the policy decided an agent action: each simple command, path or URL, the rule that decided it and why it was not statically known. */
function policyParts(policy) {
  const items = policy.parts
    .filter((part) => part && typeof part.text === 'string')
    .map((part) =>
      el('li', { class: `part ${String(part.decision)}` }, [
        el('span', { class: 'decision', text: escapeText(String(part.decision)) }),
        el('span', { text: ` ${escapeText(String(part.kind))} ` }),
        el('code', { text: escapeText(part.text) }),
        el('span', { class: 'rule', text: ` by ${escapeText(typeof part.rule === 'string' ? part.rule : 'policy')}` }),
        typeof part.reason === 'string' ? el('span', { class: 'reason', text: ` (why: ${escapeText(part.reason)})` }) : '',
      ]),
    );
  return el('ul', { class: 'policy-parts', 'aria-label': 'How the policy decided' }, items);
}

/** The agent lines: a shell command itself (line by line, escaped) and each part the rules judged. */
function agentLines(approval) {
  const agent = agentActionOf(approval);
  if (agent === undefined) return [];
  const nodes = [];
  if (agent.command !== undefined) nodes.push(multiline('pre', { class: 'command', 'aria-label': 'Shell command' }, agent.command));
  if (agent.policy !== undefined) nodes.push(policyParts(agent.policy));
  return nodes;
}

/** Tools whose arguments are a file edit: the agents' own (Edit, MultiEdit, Write; Gemini's replace, write_file) and file servers' write tools. */
const FILE_EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'replace', 'write_file', 'edit_file', 'create_file']);

/** The edits a file-edit tool's arguments describe: [{path, before?, after, key}], or undefined. */
export function fileEditsOf(approval) {
  const args = approval.args;
  if (approval.kind !== 'tool' || !isObject(args) || !FILE_EDIT_TOOLS.has(approval.tool)) return undefined;
  const path = typeof args.file_path === 'string' ? args.file_path : typeof args.path === 'string' ? args.path : undefined;
  if (path === undefined) return undefined;
  if (typeof args.old_string === 'string' && typeof args.new_string === 'string') return { path, edits: [{ before: args.old_string, after: args.new_string }], keys: ['old_string', 'new_string'] };
  if (Array.isArray(args.edits)) {
    const edits = [];
    for (const edit of args.edits) {
      if (!isObject(edit)) return undefined;
      const before = typeof edit.old_string === 'string' ? edit.old_string : edit.oldText;
      const after = typeof edit.new_string === 'string' ? edit.new_string : edit.newText;
      if (typeof before !== 'string' || typeof after !== 'string') return undefined;
      edits.push({ before, after });
    }
    return { path, edits, keys: ['edits'] };
  }
  if (typeof args.content === 'string') return { path, edits: [{ before: undefined, after: args.content }], keys: ['content'] };
  return undefined;
}

/** Cells of a line-by-line LCS table past which the diff shows every old line removed and every new line added. */
const MAX_DIFF_CELLS = 4_000_000;

/** A line diff of two texts: [{op: ' ' | '-' | '+', line}]. */
export function lineDiff(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head = a.slice(0, start).map((line) => ({ op: ' ', line }));
  const tail = a.slice(endA).map((line) => ({ op: ' ', line }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle = [];
  if ((midA.length + 1) * (midB.length + 1) > MAX_DIFF_CELLS) {
    for (const line of midA) middle.push({ op: '-', line });
    for (const line of midB) middle.push({ op: '+', line });
  } else {
    // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
    const width = midB.length + 1;
    const lcs = new Uint32Array((midA.length + 1) * width);
    for (let i = midA.length - 1; i >= 0; i -= 1) {
      for (let j = midB.length - 1; j >= 0; j -= 1) {
        lcs[i * width + j] = midA[i] === midB[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        middle.push({ op: ' ', line: midA[i] });
        i += 1;
        j += 1;
      } else if (i < midA.length && (j === midB.length || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
        // Removed lines before added ones, as unified diffs show them.
        middle.push({ op: '-', line: midA[i] });
        i += 1;
      } else {
        middle.push({ op: '+', line: midB[j] });
        j += 1;
      }
    }
  }
  return [...head, ...middle, ...tail];
}

const DIFF_CLASS = { ' ': 'same', '-': 'del', '+': 'add' };

function diffBlock(edit) {
  const rows = edit.before === undefined ? edit.after.split('\n').map((line) => ({ op: '+', line })) : lineDiff(edit.before, edit.after);
  const pre = el('pre', { class: 'diff', 'aria-label': 'Diff' });
  rows.forEach((row, index) => {
    pre.append(el('span', { class: DIFF_CLASS[row.op], text: `${row.op} ${escapeText(row.line)}` }));
    if (index < rows.length - 1) pre.append('\n');
  });
  return pre;
}

/** A file edit as a diff of old and new text; a whole-file write as its new lines. */
function fileEditLines(approval) {
  const found = fileEditsOf(approval);
  if (found === undefined) return { nodes: [], shownKeys: [] };
  const nodes = [el('p', { class: 'diff-head' }, [el('span', { class: 'label', text: 'Changes to' }), ` ${escapeText(found.path)}`])];
  found.edits.forEach((edit, index) => {
    if (found.edits.length > 1) nodes.push(el('p', { class: 'note', text: `Edit ${index + 1} of ${found.edits.length}` }));
    if (edit.before === undefined) nodes.push(el('p', { class: 'note', text: 'The whole file is written with these lines; its current content is not shown (assent does not read it).' }));
    nodes.push(diffBlock(edit));
  });
  return { nodes: [el('section', { class: 'file-edit', 'aria-label': 'File edit' }, nodes)], shownKeys: found.keys };
}

/** String arguments holding a newline, with their path in the arguments, depth-first; `skip` names top-level keys shown elsewhere. */
function multilineStrings(value, path, skip, out, depth = 0) {
  if (out.length >= 20 || depth > 4) return out;
  if (typeof value === 'string') {
    if (value.includes('\n')) out.push({ path, value });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => multilineStrings(item, `${path}[${index}]`, skip, out, depth + 1));
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (depth === 0 && skip.includes(key)) continue;
      multilineStrings(item, path === '' ? key : `${path}.${key}`, skip, out, depth + 1);
    }
  }
  return out;
}

function argumentBlocks(approval, skip) {
  if (approval.kind !== 'tool' || !isObject(approval.args)) return [];
  return multilineStrings(approval.args, '', skip, []).map(({ path, value }) =>
    el('figure', { class: 'arg-block' }, [
      el('figcaption', { text: `${escapeText(path)} (${value.split('\n').length} lines)` }),
      multiline('pre', { class: 'multiline', 'aria-label': `Argument ${escapeText(path)}` }, value),
    ]),
  );
}

function previewOf(approval) {
  if (approval.kind === 'exec') return escapedJson(approval.action);
  return escapedJson(approval.args ?? {});
}

/** Who may still decide (four-eyes, quorum) and who has approved so far (R-TEAM-3), when the daemon says. */
function teamNotes(approval, ctx) {
  const notes = [];
  const approvedBy = Array.isArray(approval.approvedBy) ? approval.approvedBy : [];
  if (approval.fourEyes) notes.push(el('p', { class: 'note', text: `Four-eyes: ${principalName(approval.owner, ctx) || 'the session owner'} may deny this but not approve it.` }));
  if ((approval.quorum ?? 1) > 1 || approvedBy.length > 0) {
    const counted = approval.fourEyes ? approvedBy.filter((p) => p !== approval.owner) : approvedBy;
    const who = approvedBy.length === 0 ? 'nobody yet' : approvedBy.map((principal) => principalName(principal, ctx)).join(', ');
    notes.push(el('p', { class: 'note approved-by', text: `Approved so far by ${who} (${counted.length} of ${approval.quorum ?? 1}).` }));
  }
  return notes;
}

/** What "Approve for session" will let through without asking again (R-POL-7). */
export function sessionCoverage(approval) {
  const agent = agentActionOf(approval);
  if (agent !== undefined) return `Approving for the session remembers ${escapeText(agent.sessionGrant)}.`;
  if (approval.kind === 'exec') return `Approving for the session lets exec actions of session ${escapeText(approval.sessionId)} run without asking until it ends.`;
  return `Approving for the session lets every ${escapeText(`${approval.server}/${approval.tool}`)} call of session ${escapeText(approval.sessionId)} run, with any arguments, without asking until the session ends.`;
}

/** Everything between a pending card's heading and its buttons. */
export function approvalBody(approval, ctx, countdown) {
  const edits = fileEditLines(approval);
  const agent = agentActionOf(approval);
  const skip = [...edits.shownKeys, ...(agent?.command === undefined ? [] : ['command'])];
  // The risk first, under the heading: the level is what a person on a phone reads before anything else (R-POL-10).
  return [
    riskOf(approval),
    factsOf(approval, ctx, countdown),
    whyOf(approval),
    ...agentLines(approval),
    ...edits.nodes,
    ...argumentBlocks(approval, skip),
    el('pre', { class: 'preview', 'aria-label': 'Complete arguments' }, [previewOf(approval)]),
    el('details', { class: 'meta caller' }, [el('summary', { text: 'What the caller sent and the daemon recorded' }), el('span', { text: `caller ${escapedJson(approval.caller ?? {})}` })]),
    ...teamNotes(approval, ctx),
  ];
}
