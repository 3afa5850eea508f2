// The approval page (R-WEB-3, R-REM-5): pairing, the live queue, one approval
// opened from a link, history and the audit view. What a card shows of an
// approval is web/approvalView.js; everything from the daemon is rendered with
// textContent, never as HTML, escaped like the terminal's (R-TTY-3).
/* global document, window, fetch, EventSource, history, location, navigator */
import { approvalBody, auditOutcomeWords, channelWords, el, escapeText, outcomeWords, principalName, sessionCoverage, shortTime, titleOf } from './approvalView.js';
import { approveWithPasskey, passkeyNote } from '/passkeys.js';

const $ = (id) => document.getElementById(id);
const state = {
  pending: [],
  resolved: [],
  noted: new Set(),
  events: undefined,
  view: 'pending',
  clockSkewMs: 0,
  focusId: undefined,
  focusRender: 0,
  /** This daemon's host (daemon.status) for approvals that do not name their own, and browser names by device id (web.devices). */
  host: { devices: new Map() },
};
const TITLE = 'assent — approvals';

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

function renderPending() {
  const list = $('pending-list');
  list.replaceChildren();
  $('pending-empty').hidden = state.pending.length > 0;
  $('pending-count').textContent = state.pending.length > 0 ? `(${state.pending.length})` : '';
  for (const approval of state.pending) list.append(pendingCard(approval));
  showPendingCount(state.pending.length);
  void renderFocus();
}

/** The tab title, the favicon and (installed) the app icon's badge count what waits. */
function showPendingCount(count) {
  document.title = count > 0 ? `(${count}) ${TITLE}` : TITLE;
  $('favicon').setAttribute('href', count > 0 ? '/icon-pending.svg' : '/icon.svg');
  try {
    if (count > 0 && typeof navigator.setAppBadge === 'function') void navigator.setAppBadge(count).catch(() => undefined);
    else if (count === 0 && typeof navigator.clearAppBadge === 'function') void navigator.clearAppBadge().catch(() => undefined);
  } catch {
    // No badge where the browser has none.
  }
}

/** One pending approval with its Approve/Deny controls. */
function pendingCard(approval) {
  const countdown = el('span', { class: 'countdown', 'data-expires': String(approval.expiresAt), text: remaining(approval.expiresAt) });
  const reason = el('input', { type: 'text', maxlength: '1000', 'aria-label': 'Reason', placeholder: 'reason (optional)' });
  // Handoff approvals: no call waits; an allow issues the proof the agent's identical retry consumes.
  // R-REM-6: an approval that needs a passkey is approved with one (web/passkeys.js), once, never for the session.
  const passkey = approval.presence === 'passkey';
  const once = el('button', { type: 'button', class: 'approve', text: passkey ? 'Approve with passkey' : approval.handoff ? "Authorize for the agent's retry" : 'Approve once' });
  const coverage = el('p', { class: 'note session-grant', id: `covers-${approval.id}`, text: sessionCoverage(approval) });
  const session = el('button', { type: 'button', class: 'session', text: 'Approve for session', 'aria-describedby': coverage.id });
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
    ...approvalBody(approval, state.host, countdown),
    approval.handoff ? el('p', { class: 'note', text: 'Handoff: the agent was told to retry this exact call; authorizing lets that one retry run once.' }) : single ? '' : coverage,
    passkeyNote(approval),
    el('div', { class: 'actions' }, single ? [once, el('label', {}, [reason]), deny] : [once, session, el('label', {}, [reason]), deny]),
    error,
  ]);
  return card;
}

/** A decided, expired or cancelled approval: when, what became of it in plain words, by whom, and why. */
function resolvedCard(approval) {
  const details = [el('span', { class: 'outcome', text: outcomeWords(approval) })];
  const via = channelWords(approval.channel);
  if (via !== '') details.push(el('span', { text: via }));
  if (typeof approval.decidedBy === 'string') details.push(el('span', { text: `by ${principalName(approval.decidedBy, state.host)}` }));
  if (typeof approval.decidedAt === 'number') details.push(el('span', { class: 'time', title: new Date(approval.decidedAt).toISOString(), text: shortTime(approval.decidedAt) }));
  details.push(el('span', { text: `id ${approval.id}` }));
  if (approval.reason && approval.channel !== undefined && approval.reason !== 'consent_denied') details.push(el('span', { text: `reason: ${escapeText(approval.reason)}` }));
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

async function loadAudit() {
  const body = $('audit-table').querySelector('tbody');
  try {
    await loadDevices();
    const records = await api('audit.query', { limit: 100 });
    body.replaceChildren();
    for (const record of records.reverse()) {
      const tool = record.server ? `${record.agent ? `${record.agent} ` : ''}${record.server}/${record.tool}` : (record.kind ?? '');
      body.append(
        el('tr', {}, [
          el('td', { text: shortTime(record.ts), title: String(record.ts ?? '') }),
          el('td', { text: auditOutcomeWords(record) }),
          el('td', { text: escapeText(tool) }),
          el('td', { text: channelWords(record.channel) }),
          el('td', { text: escapeText(record.approvalId ?? '') }),
          el('td', { text: principalName(record.principal, state.host), title: String(record.principal ?? '') }),
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
  // Team mode (R-TEAM-3): a partial approval under a quorum changes who has approved so far.
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

/** This daemon's host name and id, and the names of paired browsers, for the cards; the page works without them. */
async function loadHost() {
  try {
    const status = await api('daemon.status');
    if (status && typeof status.host === 'object' && status.host !== null) {
      state.host.hostName = status.host.name;
      state.host.hostId = status.host.id;
    }
  } catch {
    // Unknown host: the cards say so.
  }
  await loadDevices();
}

async function loadDevices() {
  try {
    const devices = await api('web.devices');
    if (Array.isArray(devices)) state.host.devices = new Map(devices.filter((d) => d && typeof d.id === 'string').map((d) => [d.id, String(d.name ?? '')]));
  } catch {
    // Browsers are then named by their id.
  }
}

async function enterApp() {
  $('pair').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = false;
  await loadHost();
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
