// The `notifications` section (R-REM-7, issue 13 item 4): `true`/`false` stays a
// shorthand for `{os: …}`; the object form adds ntfy and a webhook; `assent
// config check` names the key path of every problem; a reload diff never shows
// an ntfy topic or a webhook URL's path.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type Config } from '../../../src/core/config/config.js';
import { diffPolicy } from '../../../src/core/config/configDiff.js';
import { approvalLink } from '../../../src/core/approval/pushMessage.js';

function check(notifications: unknown): ReturnType<typeof validateConfig> {
  return validateConfig({ notifications });
}

function configWith(notifications: unknown): Config {
  const { config, problems } = check(notifications);
  expect(problems).toEqual([]);
  return config as Config;
}

describe('R-REM-7 notifications config (remote 4)', () => {
  it('R-REM-7 true and false are shorthand for {os: true|false}; the default is {os: true}', () => {
    expect(DEFAULT_CONFIG.notifications).toEqual({ os: true });
    expect(configWith(true).notifications).toEqual({ os: true });
    expect(configWith(false).notifications).toEqual({ os: false });
    expect(configWith({}).notifications).toEqual({ os: true });
  });

  it('R-REM-7 the object form takes ntfy {url, topic, tokenFile?} and webhook {url, format}', () => {
    const value = {
      os: false,
      ntfy: { url: 'https://ntfy.sh', topic: 'assent-x7Qp', tokenFile: '/home/me/.config/ntfy-token' },
      webhook: { url: 'https://hooks.slack.com/services/T/B/C', format: 'slack' },
    };
    expect(configWith(value).notifications).toEqual(value);
    expect(configWith({ webhook: { url: 'http://127.0.0.1:9000/hook' } }).notifications).toEqual({ os: true, webhook: { url: 'http://127.0.0.1:9000/hook', format: 'json' } });
  });

  const invalid: Array<[string, unknown, string, RegExp]> = [
    ['a string', 'false', 'notifications', /string \("false"\).*true or false, or an object/],
    ['os a string', { os: 'yes' }, 'notifications.os', /true or false/],
    ['ntfy without topic', { ntfy: { url: 'https://ntfy.sh' } }, 'notifications.ntfy.topic', /nothing \(the key is missing\).*topic name/],
    ['ntfy topic with a slash', { ntfy: { url: 'https://ntfy.sh', topic: 'a/b' } }, 'notifications.ntfy.topic', /topic name/],
    ['ntfy url not http', { ntfy: { url: 'ftp://ntfy.sh', topic: 't' } }, 'notifications.ntfy.url', /http:\/\/ or https:\/\//],
    ['ntfy tokenFile empty', { ntfy: { url: 'https://ntfy.sh', topic: 't', tokenFile: '' } }, 'notifications.ntfy.tokenFile', /file path/],
    ['ntfy token over plain http off loopback', { ntfy: { url: 'http://ntfy.lan', topic: 't', tokenFile: '/t' } }, 'notifications.ntfy.url', /in clear; use an https:\/\/ URL/],
    ['webhook format unknown', { webhook: { url: 'https://h.example/x', format: 'teams' } }, 'notifications.webhook.format', /"json" or "slack"/],
    ['webhook without url', { webhook: { format: 'json' } }, 'notifications.webhook.url', /http:\/\/ or https:\/\//],
    ['webhook an array', { webhook: [] }, 'notifications.webhook', /an array of 0 items/],
  ];
  for (const [name, value, path, message] of invalid) {
    it(`R-REM-7 config check names the key path: ${name}`, () => {
      const { config, problems } = check(value);
      expect(config).toBeUndefined();
      const problem = problems.find((p) => p.path === path);
      expect(problem, JSON.stringify(problems)).toBeDefined();
      expect(problem?.severity).toBe('error');
      expect(problem?.message).toMatch(message);
    });
  }

  it('R-REM-7 a token over plain http to loopback is allowed (a local relay)', () => {
    expect(check({ ntfy: { url: 'http://127.0.0.1:8080', topic: 't', tokenFile: '/t' } }).problems).toEqual([]);
  });

  it('R-CFG-1 (remote 4) a misspelt key inside notifications warns with the key it probably meant', () => {
    const { config, problems } = check({ nfty: { url: 'https://ntfy.sh', topic: 't' }, webhook: { url: 'https://h.example/x', fromat: 'slack' } });
    expect(config).toBeDefined();
    expect(problems.map((p) => [p.severity, p.path])).toEqual([
      ['warning', 'notifications.nfty'],
      ['warning', 'notifications.webhook.fromat'],
    ]);
    expect(problems[0]?.message).toContain('did you mean "ntfy"?');
  });

  it('R-CFG-4 (remote 4) a reload diff says what changed in notifications, never the ntfy topic or a webhook path', () => {
    const before = configWith(true);
    const after = configWith({ os: false, ntfy: { url: 'https://ntfy.sh', topic: 'secret-topic-x7' }, webhook: { url: 'https://hooks.slack.com/services/T/B/SECRETPART', format: 'slack' } });
    const lines = diffPolicy(before, after);
    expect(lines).toEqual(['notifications.os: true → false (from the next daemon start)', 'notifications.ntfy: added (https://ntfy.sh)', 'notifications.webhook: added (https://hooks.slack.com)']);
    const changed = configWith({ os: false, ntfy: { url: 'https://ntfy.sh', topic: 'other-topic' }, webhook: { url: 'https://hooks.slack.com/services/T/B/SECRETPART', format: 'slack' } });
    expect(diffPolicy(after, changed)).toEqual(['notifications.ntfy: topic changed (https://ntfy.sh → https://ntfy.sh)']);
    expect(diffPolicy(changed, before).join('\n')).not.toMatch(/SECRETPART|other-topic/);
    expect(diffPolicy(before, configWith(true))).toEqual([]);
  });

  it('R-REM-4 the link is publicUrl#/approvals/<id>', () => {
    expect(approvalLink('https://phone.example.ts.net/', 'abcde')).toBe('https://phone.example.ts.net/#/approvals/abcde');
    expect(approvalLink('https://phone.example.ts.net', 'abcde')).toBe('https://phone.example.ts.net/#/approvals/abcde');
    expect(approvalLink('http://127.0.0.1:7788/#/old', 'abcde')).toBe('http://127.0.0.1:7788/#/approvals/abcde');
  });
});
