// The approval page (R-WEB-3). Everything from the daemon is rendered with
// textContent, never as HTML; previews are escaped JSON like the terminal's
// (R-TTY-3), so control characters, bidi overrides and look-alikes show as \uXXXX.
/* global document, window, fetch, EventSource, history, location */
import { approveWithPasskey, passkeyNote } from '/passkeys.js';

const $ = (id) => document.getElementById(id);
const state = { pending: [], resolved: [], noted: new Set(), events: undefined, view: 'pending', clockSkewMs: 0, focusId: undefined, focusRender: 0 };

/** JSON with every code unit >= U+007F escaped; JSON.stringify already escapes C0 controls. */
function escapedJson(value) {
  const text = JSON.stringify(value, null, 2);
  if (text === undefined) return 'null';
  return text.replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function escapeText(text) {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return String(text).replace(/[\u0000-\u001f\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.message === 'string' ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

async function api(name, params = {}) {
  const response = await fetch(`/api/v1/${name}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

function setStatus(text) {
  $('status').textContent = text;
}

function showPairing(message = '') {
  if (state.events) state.events.close();
  state.events = undefined;
  $('app').hidden = true;
  $('logout').hidden = true;
  $('pair').hidden = false;
  $('pair-error').textContent = message;
  setStatus('not paired');
  $('pairing-code').focus();
}

function remaining(expiresAt) {
  const seconds = Math.max(0, Math.round((expiresAt - Date.now() - state.clockSkewMs) / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, '0')}`;
}

/** An agent action (filed by an agent's hook): agent, cwd, kind and a shell command's text, from the caller the daemon recorded. */
function agentActionOf(approval) {
  const caller = approval.caller ?? {};
  if (approval.kind !== 'tool' || caller.head !== 'hook' || typeof caller.agent !== 'string') return undefined;
  const command = approval.args && approval.args.command;
  return {
    agent: caller.agent,
    cwd: typeof caller.cwd === 'string' ? caller.cwd : undefined,
    kind: typeof caller.kind === 'string' ? caller.kind : undefined,
    command: caller.kind === 'shell' && typeof command === 'string' ? command : undefined,
    policy: caller.policy && typeof caller.policy === 'object' && Array.isArray(caller.policy.parts) ? caller.policy : undefined,
    sessionGrant: typeof caller.sessionGrant === 'string' ? caller.sessionGrant : 'this exact input',
  };
}

/** How the policy decided an agent action: each simple command, path or URL, the rule that decided it and why it was not statically known. */
function policyLines(policy) {
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
  const head = el('p', { class: 'meta policy', text: `policy ${escapeText(String(policy.decision))} (decided by ${escapeText(typeof policy.key === 'string' ? policy.key : 'policy')})` });
  return [head, el('ul', { class: 'policy-parts', 'aria-label': 'How the policy decided' }, items)];
}

function titleOf(approval) {
  if (approval.kind === 'exec') return 'exec action';
  return `${approval.server}/${approval.tool}${agentActionOf(approval) ? ' (agent action)' : ''}`;
}

/** The agent lines of a card: agent, cwd, kind, and the shell command text itself, escaped like the preview. */
function agentLines(approval) {
  const agent = agentActionOf(approval);
  if (agent === undefined) return [];
  const meta = el('div', { class: 'meta agent' }, [
    el('span', { text: `agent ${escapeText(agent.agent)}` }),
    el('span', { text: `cwd ${agent.cwd === undefined ? '(not given)' : escapeText(agent.cwd)}` }),
    agent.kind === undefined ? '' : el('span', { text: `kind ${escapeText(agent.kind)}` }),
  ]);
  const policy = agent.policy === undefined ? [] : policyLines(agent.policy);
  policy.push(el('p', { class: 'note session-grant', text: `Approving for the session remembers ${escapeText(agent.sessionGrant)}.` }));
  if (agent.command === undefined) return [meta, ...policy];
  return [meta, el('pre', { class: 'command', 'aria-label': 'Shell command' }, [escapeText(agent.command)]), ...policy];
}

function previewOf(approval) {
  if (approval.kind === 'exec') return escapedJson(approval.action);
  return escapedJson(approval.args ?? {});
}

/** Who may still decide (four-eyes, quorum) and who has approved so far (R-TEAM-3). */
function teamNotes(approval) {
  const notes = [];
  const approvedBy = approval.approvedBy ?? [];
  if (approval.fourEyes) notes.push(el('p', { class: 'note', text: `Four-eyes: ${escapeText(approval.owner ?? 'the session owner')} may deny this but not approve it.` }));
  if ((approval.quorum ?? 1) > 1 || approvedBy.length > 0) {
    const counted = approval.fourEyes ? approvedBy.filter((p) => p !== approval.owner) : approvedBy;
    const who = approvedBy.length === 0 ? 'nobody yet' : approvedBy.map(escapeText).join(', ');
    notes.push(el('p', { class: 'note approved-by', text: `Approved so far by ${who} (${counted.length} of ${approval.quorum ?? 1}).` }));
  }
  return notes;
}

function renderPending() {
  const list = $('pending-list');
  list.replaceChildren();
  $('pending-empty').hidden = state.pending.length > 0;
  $('pending-count').textContent = state.pending.length > 0 ? `(${state.pending.length})` : '';
  for (const approval of state.pending) list.append(pendingCard(approval));
  void renderFocus();
}

/** One pending approval with its Approve/Deny controls. */
function pendingCard(approval) {
  const countdown = el('span', { class: 'countdown', 'data-expires': String(approval.expiresAt), text: remaining(approval.expiresAt) });
  const reason = el('input', { type: 'text', maxlength: '1000', 'aria-label': 'Reason', placeholder: 'reason (optional)' });
  // Handoff approvals: no call waits; an allow issues the proof the agent's identical retry consumes.
  // R-REM-6: an approval that needs a passkey is approved with one (web/passkeys.js), once, never for the session.
  const passkey = approval.presence === 'passkey';
  const once = el('button', { type: 'button', class: 'approve', text: passkey ? 'Approve with passkey' : approval.handoff ? "Authorize for the agent's retry" : 'Approve once' });
  const session = el('button', { type: 'button', text: 'Approve for session' });
  const deny = el('button', { type: 'button', class: 'deny', text: 'Deny' });
  const error = el('p', { class: 'error', role: 'alert' });
  const single = approval.handoff || passkey;
  const buttons = single ? [once, deny] : [once, session, deny];
  const decide = async (params) => {
    for (const button of buttons) button.disabled = true;
    error.textContent = '';
    try {
      await (passkey && params.behavior === 'allow' ? approveWithPasskey(approval.id) : api('approvals.decide', { id: approval.id, ...params }));
      await refresh();
    } catch (failure) {
      if (failure.status === 401) return showPairing('Your session ended; pair again.');
      error.textContent = failure.message;
      for (const button of buttons) button.disabled = false;
    }
    return undefined;
  };
  once.addEventListener('click', () => decide({ behavior: 'allow', scope: 'call' }));
  session.addEventListener('click', () => decide({ behavior: 'allow', scope: 'session' }));
  deny.addEventListener('click', () => {
    const text = reason.value.trim();
    return decide(text === '' ? { behavior: 'deny' } : { behavior: 'deny', reason: text });
  });
  const card = el('li', { class: 'card', 'data-approval-id': approval.id }, [
    el('h3', { text: escapeText(titleOf(approval)) }),
    el('div', { class: 'meta' }, [
      el('span', { text: `id ${approval.id}` }),
      el('span', { text: `session ${escapeText(approval.sessionId)}` }),
      el('span', {}, ['expires in ', countdown]),
    ]),
    ...agentLines(approval),
    el('pre', { class: 'preview', 'aria-label': 'Complete arguments' }, [previewOf(approval)]),
    el('div', { class: 'meta' }, [el('span', { text: `caller ${escapedJson(approval.caller ?? {})}` })]),
    ...teamNotes(approval),
    approval.handoff ? el('p', { class: 'note', text: 'Handoff: the agent was told to retry this exact call; authorizing lets that one retry run once.' }) : '',
    passkeyNote(approval),
    el('div', { class: 'actions' }, single ? [once, el('label', {}, [reason]), deny] : [once, session, el('label', {}, [reason]), deny]),
    error,
  ]);
  return card;
}

/** A decided, expired or cancelled approval: its outcome, channel and reason. */
function resolvedCard(approval) {
  const outcome = approval.state === 'approved' ? `approved${approval.scope === 'session' ? ' for session' : ''}` : approval.state;
  const details = [
    el('span', { text: `id ${approval.id}` }),
    el('span', { text: escapeText(outcome) }),
    el('span', { text: `via ${escapeText(approval.channel ?? 'lifecycle')}` }),
  ];
  if (approval.decidedBy) details.push(el('span', { text: `by ${escapeText(approval.decidedBy)}` }));
  if (approval.reason) details.push(el('span', { text: `reason: ${escapeText(approval.reason)}` }));
  return el('li', { class: 'card', 'data-approval-id': approval.id }, [el('h3', { text: escapeText(titleOf(approval)) }), el('div', { class: 'meta' }, details)]);
}

function renderResolved() {
  const list = $('resolved-list');
  list.replaceChildren();
  $('resolved-empty').hidden = state.resolved.length > 0;
  for (const approval of state.resolved) list.append(resolvedCard(approval));
}

/**
 * The approval a deep link (#/approvals/<id>) opened: its card with the
 * controls while pending, its outcome once resolved. Renders race (a refresh
 * and an event); only the newest one writes.
 */
async function renderFocus() {
  const id = state.focusId;
  if (id === undefined) return;
  const turn = ++state.focusRender;
  const box = $('approval-focus');
  const pendingOne = state.pending.find((approval) => approval.id === id);
  const others = state.pending.length - (pendingOne === undefined ? 0 : 1);
  $('focus-others').textContent = others > 0 ? `All pending (${others} more)` : 'All pending';
  if (pendingOne !== undefined) {
    box.replaceChildren(pendingCard(pendingOne));
    return;
  }
  let node;
  if (!/^[a-z]{5}$/.test(id)) {
    node = el('p', { class: 'error', text: `The link names no approval: "${escapeText(id)}" is not an approval id.` });
  } else {
    try {
      const approval = await api('approvals.get', { id });
      node = approval.state === 'pending' ? pendingCard(approval) : resolvedCard(approval);
    } catch (failure) {
      if (failure.status === 401) return showPairing('Your session ended; pair again.');
      node = el('p', { class: 'error', text: `Approval ${id} is not on this daemon: ${failure.message}` });
    }
  }
  if (turn === state.focusRender && state.focusId === id) box.replaceChildren(node);
  return undefined;
}
async function refresh() {
  const previous = new Map(state.pending.map((approval) => [approval.id, approval]));
  state.pending = await api('approvals.list', { state: 'pending' });
  const current = new Set(state.pending.map((approval) => approval.id));
  for (const id of previous.keys()) if (!current.has(id)) await noteResolved(id);
  renderPending();
}

async function noteResolved(id) {
  // Claimed before the first await: the refresh and the SSE event may both report the same id.
  if (state.noted.has(id)) return;
  state.noted.add(id);
  try {
    const approval = await api('approvals.get', { id });
    if (approval.state === 'pending') {
      state.noted.delete(id);
      return;
    }
    state.resolved.unshift(approval);
    state.resolved.length = Math.min(state.resolved.length, 25);
    renderResolved();
  } catch {
    // Gone or not readable; nothing to show.
    state.noted.delete(id);
  }
}

/** Local date and time for a record's timestamp (ISO text or ms); the exact value stays in the cell's title. */
function shortTime(ts) {
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? String(ts ?? '') : date.toLocaleString();
}

async function loadAudit() {
  const body = $('audit-table').querySelector('tbody');
  try {
    const records = await api('audit.query', { limit: 100 });
    body.replaceChildren();
    for (const record of records.reverse()) {
      const tool = record.server ? `${record.server}/${record.tool}` : (record.kind ?? '');
      body.append(
        el('tr', {}, [
          el('td', { text: shortTime(record.ts), title: String(record.ts ?? '') }),
          el('td', { text: escapeText(record.outcome ?? '') }),
          el('td', { text: escapeText(tool) }),
          el('td', { text: escapeText(record.channel ?? '') }),
          el('td', { text: escapeText(record.approvalId ?? '') }),
          el('td', { text: escapeText(record.principal ?? '') }),
        ]),
      );
    }
  } catch (failure) {
    if (failure.status === 401) showPairing('Your session ended; pair again.');
    else setStatus(failure.message);
  }
}

function showView(view) {
  state.view = view;
  if (view !== 'approval') {
    state.focusId = undefined;
    if (location.hash !== '') history.replaceState(null, '', location.pathname);
  }
  for (const button of document.querySelectorAll('nav button')) button.setAttribute('aria-pressed', String(button.dataset.view === view));
  for (const name of ['approval', 'pending', 'resolved', 'audit']) $(`view-${name}`).hidden = name !== view;
  if (view === 'audit') void loadAudit();
  if (view === 'approval') void renderFocus();
}

function listen() {
  if (state.events) state.events.close();
  const events = new EventSource('/api/v1/events');
  state.events = events;
  // Once the stream is live, list again: a request filed while it was connecting sent its
  // event to nobody, and would otherwise stay off the page until the next event.
  events.addEventListener('ready', () => {
    setStatus('live');
    void refresh().catch(() => undefined);
  });
  const onChange = (message) => {
    void refresh().catch(() => undefined);
    try {
      const event = JSON.parse(message.data);
      if (event.kind === 'approval_resolved' && typeof event.data.id === 'string') void noteResolved(event.data.id);
    } catch {
      // Not JSON; the refresh above is enough.
    }
  };
  events.addEventListener('approval_requested', onChange);
  events.addEventListener('approval_resolved', onChange);
  events.addEventListener('approval_voted', onChange);
  events.addEventListener('error', () => {
    setStatus('reconnecting…');
    if (events.readyState === EventSource.CLOSED) {
      api('approvals.list', { limit: 1 }).then(
        () => window.setTimeout(listen, 2000),
        (failure) => (failure.status === 401 ? showPairing('Your session ended; pair again.') : window.setTimeout(listen, 2000)),
      );
    }
  });
}

async function enterApp() {
  $('pair').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = false;
  showView(state.focusId === undefined ? state.view : 'approval');
  listen();
  await refresh();
}

async function pair(code) {
  $('pair-error').textContent = '';
  try {
    // "Remember this device" keeps the session across daemon restarts for web.deviceTtlDays (R-REM-3).
    await api('pair', { code: code.trim(), remember: $('remember-device').checked });
    $('pairing-code').value = '';
    await enterApp();
  } catch (failure) {
    showPairing(failure.message);
  }
}

/**
 * The fragment: `#code=CODE` pairs (the code leaves the address bar and
 * history at once), `#/approvals/<id>` opens that approval (kept in the address
 * bar through pairing, so a reload still opens it); both may be joined by `&`.
 */
function readFragment() {
  const parts = location.hash.slice(1).split('&').filter((part) => part !== '');
  let code;
  let route;
  for (const part of parts) {
    if (part.startsWith('code=')) code = decodeURIComponent(part.slice(5));
    else if (part === 'remember=1') $('remember-device').checked = true;
    else if (part.startsWith('/')) route = part;
  }
  if (code !== undefined) history.replaceState(null, '', `${location.pathname}${route === undefined ? '' : `#${route}`}`);
  const match = route === undefined ? null : /^\/approvals\/([^/]*)$/.exec(route);
  return { code, approvalId: match === null ? undefined : decodeURIComponent(match[1]) };
}

function showPairingFor() {
  $('pair-target').textContent = state.focusId === undefined ? '' : `After pairing, this page opens approval ${escapeText(state.focusId)}.`;
}

async function start() {
  $('pair-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void pair($('pairing-code').value);
  });
  $('logout').addEventListener('click', async () => {
    await api('logout').catch(() => undefined);
    showPairing('Signed out.');
  });
  for (const button of document.querySelectorAll('nav button')) button.addEventListener('click', () => showView(button.dataset.view));
  $('audit-refresh').addEventListener('click', () => void loadAudit());
  window.setInterval(() => {
    for (const node of document.querySelectorAll('.countdown')) node.textContent = remaining(Number(node.dataset.expires));
  }, 1000);

  window.addEventListener('hashchange', () => {
    const { code, approvalId } = readFragment();
    if (code !== undefined) void pair(code);
    if (approvalId === undefined) return;
    state.focusId = approvalId;
    showPairingFor();
    if (!$('app').hidden) showView('approval');
  });
  $('focus-others').addEventListener('click', () => showView('pending'));

  const { code: fragmentCode, approvalId } = readFragment();
  state.focusId = approvalId;
  showPairingFor();
  if (fragmentCode !== undefined) {
    $('pairing-code').value = fragmentCode;
    await pair(fragmentCode);
    return;
  }
  try {
    await api('approvals.list', { limit: 1 });
    await enterApp();
  } catch (failure) {
    showPairing(failure.status === 401 ? '' : failure.message);
  }
}

void start();
