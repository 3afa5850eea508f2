// Push notifications (R-REM-4, R-REM-7): notify() only queues; each target gets
// at most one request in flight and one per 2 s window, so a burst becomes one
// push naming every id; a request unanswered after 5 s is aborted and counted;
// the ntfy token is read from its file for the Authorization header only.
// Fetch, file reads, timers and the clock are fakes driven by hand.
import { describe, expect, it } from 'vitest';
import { createPushNotifier, MAX_NAMED, type FetchLike, type PushNotifierOptions, type PushTargets } from '../../../src/channels/pushNotifier.js';
import { ManualTime } from '../../helpers/manualTime.js';

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  signal: AbortSignal;
  answer: (status: number) => void;
  refuse: (code: string) => void;
}

/** A fetch whose requests wait until the test answers them (or their signal aborts). */
function fakeFetch(): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = (url, init) =>
    new Promise((resolve, reject) => {
      init.signal.addEventListener('abort', () => reject(Object.assign(new Error(`aborted ${url}`), { name: 'AbortError' })));
      sent.push({
        url,
        headers: init.headers,
        body: JSON.parse(init.body) as Record<string, unknown>,
        signal: init.signal,
        answer: (status) => resolve({ ok: status >= 200 && status < 300, status, body: null }),
        refuse: (code) => reject(Object.assign(new TypeError(`fetch failed for ${url}`), { cause: { code } })),
      });
    });
  return { fetch, sent };
}

const TARGETS: PushTargets = {
  ntfy: { url: 'https://ntfy.example', topic: 'assent-alerts' },
  webhook: { url: 'https://hooks.example/T000/SECRET-PATH', format: 'json' },
};

function setup(overrides: Partial<PushNotifierOptions> = {}, targets: PushTargets = TARGETS) {
  const time = new ManualTime();
  const { fetch, sent } = fakeFetch();
  const failures: [string, string][] = [];
  let current = targets;
  const notifier = createPushNotifier({
    targets: () => current,
    host: () => 'build-box',
    pageUrl: () => 'https://assent.example/',
    fetch,
    readFile: () => Promise.resolve('tk_ntfy_secret\n'),
    timers: time,
    monotonic: () => time.now,
    onFailure: (target, reason) => failures.push([target, reason]),
    ...overrides,
  });
  return { time, sent, notifier, failures, setTargets: (next: PushTargets) => (current = next) };
}

/** Lets queued promise callbacks (the fake fetch's settling, file reads) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

const request = (id: string) => ({ title: `assent: approval ${id}`, body: 'fs/write_file is waiting', approvalId: id, server: 'fs', tool: 'write_file' });

describe('R-REM-4 push notifications (remote 4)', () => {
  it('R-REM-4 one request → one ntfy publish and one webhook post, after notify() returned, naming tool, id, host and link', async () => {
    const { time, sent, notifier } = setup();
    notifier.notify({ ...request('abcde'), agent: 'claude-code', server: 'claude', tool: 'Bash' });
    // Nothing is sent inside notify(): the call that filed the approval never waits for a push.
    expect(sent).toHaveLength(0);
    time.advance(0);
    await settle();
    expect(sent.map((s) => s.url)).toEqual(['https://ntfy.example', 'https://hooks.example/T000/SECRET-PATH']);
    const [ntfy, webhook] = sent;
    expect(ntfy?.body).toMatchObject({ topic: 'assent-alerts', click: 'https://assent.example/#/approvals/abcde' });
    expect(String(ntfy?.body['title'])).toBe('assent: claude-code claude/Bash waits for approval on build-box');
    expect(String(ntfy?.body['message'])).toBe('abcde: claude-code claude/Bash on build-box https://assent.example/#/approvals/abcde');
    expect(ntfy?.headers['Authorization']).toBeUndefined();
    expect(webhook?.body).toMatchObject({
      type: 'approvals_waiting',
      host: 'build-box',
      count: 1,
      approvals: [{ id: 'abcde', agent: 'claude-code', server: 'claude', tool: 'Bash', host: 'build-box', link: 'https://assent.example/#/approvals/abcde' }],
    });
    for (const s of sent) s.answer(200);
    await settle();
    expect(notifier.sent).toBe(2);
    expect(notifier.failures).toBe(0);
    expect(notifier.targets?.()).toEqual({ ntfy: { sent: 1, failures: 0 }, webhook: { sent: 1, failures: 0 } });
  });

  it('R-POL-10 R-REM-4 the title and each line put the risk level first; a burst names the highest; the webhook carries level and flags', async () => {
    const { time, sent, notifier } = setup();
    const risk = { level: 'high' as const, flags: ['privilege escalation' as const] };
    notifier.notify({ ...request('hhhhh'), agent: 'claude-code', server: 'claude', tool: 'Bash', risk });
    time.advance(0);
    await settle();
    const [ntfy, webhook] = sent;
    expect(String(ntfy?.body['title'])).toBe('assent: risk high: claude-code claude/Bash waits for approval on build-box');
    expect(String(ntfy?.body['message'])).toBe('hhhhh: risk high (privilege escalation): claude-code claude/Bash on build-box https://assent.example/#/approvals/hhhhh');
    expect(webhook?.body['approvals']).toEqual([
      { id: 'hhhhh', agent: 'claude-code', server: 'claude', tool: 'Bash', risk: { level: 'high', flags: ['privilege escalation'] }, host: 'build-box', link: 'https://assent.example/#/approvals/hhhhh' },
    ]);
    for (const s of sent) s.answer(200);
    await settle();
    notifier.notify({ ...request('lllll'), risk: { level: 'low', flags: ['shell'] } });
    notifier.notify({ ...request('eeeee'), risk: { level: 'elevated', flags: ['network'] } });
    notifier.notify(request('nnnnn'));
    time.advance(2000);
    await settle();
    const burst = sent.slice(2).find((s) => s.url.startsWith('https://ntfy'));
    expect(burst?.body['title']).toBe('assent: highest risk elevated: 3 approvals waiting on build-box');
    expect(String(burst?.body['message']).split('\n')).toEqual([
      'lllll: risk low (shell): fs/write_file on build-box https://assent.example/#/approvals/lllll',
      'eeeee: risk elevated (network): fs/write_file on build-box https://assent.example/#/approvals/eeeee',
      'nnnnn: fs/write_file on build-box https://assent.example/#/approvals/nnnnn',
    ]);
  });

  it('R-REM-7 (remote 4) a burst is coalesced to at most one push per 2 s per target, naming every id', async () => {
    const { time, sent, notifier } = setup();
    notifier.notify(request('aaaaa'));
    time.advance(0);
    await settle();
    expect(sent).toHaveLength(2);
    const ids: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const id = `b${String.fromCharCode(97 + (i % 25))}${String.fromCharCode(97 + Math.floor(i / 25))}xx`;
      ids.push(id);
      notifier.notify(request(id));
    }
    // The first pushes are answered at once, but the window holds the next ones back.
    for (const s of sent) s.answer(200);
    await settle();
    time.advance(1999);
    await settle();
    expect(sent).toHaveLength(2);
    time.advance(1);
    await settle();
    expect(sent).toHaveLength(4);
    const webhook = sent.find((s, index) => index >= 2 && s.url.startsWith('https://hooks'));
    const ntfy = sent.find((s, index) => index >= 2 && s.url.startsWith('https://ntfy'));
    expect((webhook?.body['approvals'] as { id: string }[]).map((a) => a.id)).toEqual(ids);
    expect(webhook?.body['count']).toBe(30);
    const message = String(ntfy?.body['message']);
    for (const id of ids) expect(message).toContain(id);
    expect(ntfy?.body['title']).toBe('assent: 30 approvals waiting on build-box');
    expect(ntfy?.body['click']).toBe('https://assent.example/');
  });

  it('R-REM-7 (remote 4) past the named bound a burst counts the rest, and the push says how many more', async () => {
    const { time, sent, notifier } = setup({}, { webhook: { url: 'https://hooks.example/x', format: 'json' } });
    notifier.notify(request('first'));
    time.advance(0);
    await settle();
    for (let i = 0; i < MAX_NAMED + 7; i += 1) notifier.notify(request(`id${i}`));
    expect(sent).toHaveLength(1);
    sent[0]?.answer(200);
    await settle();
    time.advance(2000);
    await settle();
    expect(sent).toHaveLength(2);
    expect((sent[1]?.body['approvals'] as unknown[]).length).toBe(MAX_NAMED);
    expect(sent[1]?.body['count']).toBe(MAX_NAMED + 7);
  });

  it('R-REM-7 (remote 4) a receiver that never answers is aborted after 5 s, counted as a failure with its reason, and the next push goes out', async () => {
    const { time, sent, notifier, failures } = setup({}, { ntfy: TARGETS.ntfy as NonNullable<PushTargets['ntfy']> });
    notifier.notify(request('slowa'));
    time.advance(0);
    await settle();
    notifier.notify(request('slowb'));
    time.advance(4999);
    await settle();
    expect(sent[0]?.signal.aborted).toBe(false);
    expect(notifier.failures).toBe(0);
    time.advance(1);
    await settle();
    expect(sent[0]?.signal.aborted).toBe(true);
    expect(notifier.failures).toBe(1);
    expect(notifier.targets?.()['ntfy']).toEqual({ sent: 0, failures: 1, lastFailure: 'no answer within 5 s' });
    expect(failures).toEqual([['ntfy', 'no answer within 5 s']]);
    // The queued request went out once the slow one was given up (its window had long passed).
    time.advance(0);
    await settle();
    expect(sent).toHaveLength(2);
    expect(String(sent[1]?.body['message'])).toContain('slowb');
  });

  it('R-REM-4 (remote 4) refused connections and HTTP errors are counted per target; the log hook hears once per failing streak, never the URL', async () => {
    const { time, sent, notifier, failures } = setup();
    notifier.notify(request('refus'));
    time.advance(0);
    await settle();
    sent[0]?.refuse('ECONNREFUSED');
    sent[1]?.answer(500);
    await settle();
    expect(notifier.targets?.()).toEqual({
      ntfy: { sent: 0, failures: 1, lastFailure: 'connection failed (ECONNREFUSED)' },
      webhook: { sent: 0, failures: 1, lastFailure: 'HTTP 500' },
    });
    time.advance(2000);
    notifier.notify(request('again'));
    time.advance(0);
    await settle();
    sent[2]?.answer(502);
    sent[3]?.answer(502);
    await settle();
    expect(notifier.failures).toBe(4);
    expect(failures).toEqual([
      ['ntfy', 'connection failed (ECONNREFUSED)'],
      ['webhook', 'HTTP 500'],
    ]);
    expect(JSON.stringify(failures)).not.toContain('SECRET-PATH');
  });

  it('R-REM-4 (remote 4) the ntfy token comes from tokenFile, goes only in the Authorization header, and an unreadable file is a counted failure with nothing sent', async () => {
    const ntfy = { url: 'https://ntfy.example', topic: 'assent-alerts', tokenFile: '/secret/ntfy-token' };
    const read: string[] = [];
    const { time, sent, notifier } = setup({ readFile: (path) => (read.push(path), Promise.resolve('tk_ntfy_secret\n')) }, { ntfy });
    notifier.notify(request('token'));
    time.advance(0);
    await settle();
    expect(read).toEqual(['/secret/ntfy-token']);
    expect(sent[0]?.headers['Authorization']).toBe('Bearer tk_ntfy_secret');
    expect(JSON.stringify(sent[0]?.body)).not.toContain('tk_ntfy_secret');

    const broken = setup({ readFile: () => Promise.reject(new Error('ENOENT /secret/ntfy-token')) }, { ntfy });
    broken.notifier.notify(request('nofil'));
    broken.time.advance(0);
    await settle();
    expect(broken.sent).toHaveLength(0);
    expect(broken.notifier.targets?.()['ntfy']).toEqual({ sent: 0, failures: 1, lastFailure: 'notifications.ntfy.tokenFile could not be read' });

    const twoLines = setup({ readFile: () => Promise.resolve('one\ntwo') }, { ntfy });
    twoLines.notifier.notify(request('lines'));
    twoLines.time.advance(0);
    await settle();
    expect(twoLines.sent).toHaveLength(0);
    expect(twoLines.notifier.failures).toBe(1);
  });

  it('R-REM-4 (remote 4) the Slack format is one mrkdwn text with a link per approval, names escaped', async () => {
    const { time, sent, notifier } = setup({}, { webhook: { url: 'https://hooks.example/s', format: 'slack' } });
    notifier.notify({ ...request('slack'), server: 'fs<&>', tool: 'write\u202efile' });
    time.advance(0);
    await settle();
    expect(sent[0]?.body).toEqual({
      text: 'assent: fs&lt;&amp;&gt;/write\\u202efile waits for approval on build-box\nslack: fs&lt;&amp;&gt;/write\\u202efile on build-box <https://assent.example/#/approvals/slack|open slack>',
    });
  });

  it('R-REM-4 (remote 4) a target removed by a reload gets nothing more; notify() never throws, even when the config read does', async () => {
    const { time, sent, notifier, setTargets } = setup();
    notifier.notify(request('queue'));
    setTargets({});
    time.advance(0);
    await settle();
    expect(sent).toHaveLength(0);
    const throwing = createPushNotifier({
      targets: () => {
        throw new Error('config gone');
      },
      host: () => 'h',
      pageUrl: () => 'http://127.0.0.1:1/',
    });
    expect(() => throwing.notify(request('throw'))).not.toThrow();
    expect(throwing.targets?.()).toEqual({});
  });
});
