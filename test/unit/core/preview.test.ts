import { describe, expect, it } from 'vitest';
import type { ExecAction } from '../../../src/core/exec/action.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { MAX_PREVIEW_BYTES, renderExecPreview } from '../../../src/core/approval/preview.js';

const action: ExecAction = { executable: '/bin/echo', cwd: '/tmp', args: ['hello'], env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } };
const render = (a: ExecAction): string => renderExecPreview({ action: a, challenge: '0a1b2c3d', deadlineSeconds: 60, policyDecision: 'ask' });

describe('R-TTY-3 preview', () => {
  it('R-TTY-3 shows executable, cwd, every argument and the effective env as JSON', () => {
    const text = render({ ...action, args: ['a', 'b c', ''] });
    expect(text).toContain('"executable": "/bin/echo"');
    expect(text).toContain('"cwd": "/tmp"');
    expect(text).toContain('"b c"');
    expect(text).toContain('""');
    expect(text).toContain('"PATH": "/usr/bin:/bin"');
  });

  it('R-TTY-3 escapes ESC, bidi overrides, look-alikes and controls; no raw byte >= 0x7f or control survives', () => {
    const text = render({ ...action, args: ['\u001b[2J', '\u202e', 'caf\u00e9', '\u0430', 'tab\there', 'nl\nx', '\u007f'] });
    for (const escaped of ['\\u001b[2J', '\\u202e', '\\u00e9', '\\u0430', '\\t', '\\n', '\\u007f']) expect(text).toContain(escaped);
    // Only the layout's own newlines remain as raw control characters.
    // eslint-disable-next-line no-control-regex -- the point is to find raw controls
    expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\uffff]/);
  });

  it('R-TTY-5 names the challenge and the deadline', () => {
    const text = render(action);
    expect(text).toContain('"RUN 0a1b2c3d"');
    expect(text).toContain('within 60 s');
  });

  it('R-TTY-4 a preview over 16 KiB is refused, never truncated', () => {
    const big = { ...action, args: Array.from({ length: 60 }, () => '\u00e9'.repeat(50)) };
    let caught: unknown;
    try {
      render(big);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AssentError);
    expect((caught as AssentError).details?.['reason']).toBe('preview-too-large');
  });

  it('R-TTY-4 a preview just under 16 KiB is shown whole', () => {
    const base = render({ ...action, args: [''] }).length;
    const fits = render({ ...action, args: ['x'.repeat(MAX_PREVIEW_BYTES - base)] });
    expect(fits.length).toBe(MAX_PREVIEW_BYTES);
    expect(() => render({ ...action, args: ['x'.repeat(MAX_PREVIEW_BYTES - base + 1)] })).toThrow(AssentError);
  });
});
