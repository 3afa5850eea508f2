// R-POL-5 / SPEC §14: tool policy evaluation with 1,000 tool entries and
// 1,000 rules must cost at most 5 µs per call. Runs against the built dist/.
import { DEFAULT_CONFIG } from '../dist/core/config/config.js';
import { compilePolicy, evaluateToolPolicy } from '../dist/core/policy/toolPolicy.js';

const TOOLS = 1000;
const RULES = 1000;
const CALLS_PER_ROUND = 100_000;
const ROUNDS = 7;

function buildSnapshot(now) {
  const tools = {};
  for (let i = 0; i < TOOLS; i += 1) tools[`s${i}/t${i}`] = i % 3 === 0 ? 'deny' : 'prompt';
  const rules = [];
  for (let i = 0; i < RULES; i += 1) {
    rules.push({
      id: `r${i}`,
      version: 1,
      // Half the rules pile onto one hot tool, so per-tool indexing alone is not the whole story.
      tool: i % 2 === 0 ? 'fs/read_file' : `s${i}/t${i}`,
      args: [{ pointer: '/path', op: 'prefix', value: `/data/${i}/` }],
      createdAt: now - 1000,
      expiresAt: i % 10 === 0 ? now - 1 : undefined,
    });
  }
  return compilePolicy({ ...DEFAULT_CONFIG.policy, tools }, rules);
}

function buildCalls() {
  const calls = [];
  for (let i = 0; i < 64; i += 1) {
    const n = (i * 37) % TOOLS;
    calls.push(
      { server: 'fs', tool: 'read_file', args: { path: `/data/${(i * 2) % RULES}/file.txt` } },
      { server: 'fs', tool: 'read_file', args: { path: '/etc/passwd' } },
      { server: `s${n}`, tool: `t${n}`, args: { path: `/data/${n}/x` } },
      { server: 'other', tool: 'list', args: {}, annotations: { readOnlyHint: true } },
    );
  }
  return calls;
}

/** µs per evaluateToolPolicy call (median of rounds) against the 5 µs target. */
export function benchPolicy() {
  const now = Date.now();
  const snapshot = buildSnapshot(now);
  const calls = buildCalls();
  let sink = 0;
  const round = () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
      const result = evaluateToolPolicy(snapshot, calls[i % calls.length], now);
      if (result.decision === 'allow') sink += 1;
    }
    return Number(process.hrtime.bigint() - start) / 1000 / CALLS_PER_ROUND;
  };
  round();
  const samples = [];
  for (let r = 0; r < ROUNDS; r += 1) samples.push(round());
  samples.sort((a, b) => a - b);
  const value = samples[Math.floor(samples.length / 2)];
  if (sink === 0) throw new TypeError('policy bench: no call was allowed by a rule; the fixture is wrong');
  return {
    name: 'policy evaluation (1,000 tools, 1,000 rules)',
    value: Math.round(value * 1000) / 1000,
    unit: 'µs',
    target: 5,
    ok: value <= 5,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(benchPolicy()));
}
