// The `npm test` of the projects in sandboxEscapes.test.ts: it tries every way
// out of the sandbox that R-SH-14 closes and writes what happened to
// src/results.json (`ok: true` = the attempt worked). targets.json, written by
// the test, names the paths, pids and ports to go after.
import { spawn, spawnSync } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const t = JSON.parse(fs.readFileSync('targets.json', 'utf8'));
const results = {};

function record(name, fn) {
  try {
    results[name] = { ok: true, detail: String(fn() ?? '') };
  } catch (error) {
    results[name] = { ok: false, detail: String(error.code ?? error.message) };
  }
}

function write(file) {
  return () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(file, 'HOSTILE\n');
  };
}

function readCanary(file) {
  return () => {
    const text = fs.readFileSync(file, 'utf8');
    if (!text.includes(t.canary)) throw new Error(`read, but no canary in ${JSON.stringify(text.slice(0, 40))}`);
    return text;
  };
}

function connect(options) {
  return new Promise((resolve) => {
    const socket = net.connect(options);
    socket.setTimeout(2000);
    socket.once('connect', () => {
      // The daemon's own RPC: approve whatever is pending.
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'approvals.decide', params: { id: 'any', behavior: 'allow', channel: 'cli' } })}\n`);
      socket.once('data', (data) => {
        socket.destroy();
        resolve({ ok: true, detail: String(data).slice(0, 80) });
      });
      setTimeout(() => {
        socket.destroy();
        resolve({ ok: true, detail: 'connected' });
      }, 500);
    });
    socket.once('error', (error) => resolve({ ok: false, detail: error.code ?? error.message }));
    socket.once('timeout', () => {
      socket.destroy();
      resolve({ ok: false, detail: 'timeout' });
    });
  });
}

async function main() {
  // Outside the project.
  record('write ~/.bashrc', write(path.join(t.home, '.bashrc')));
  record('write ~/.gitconfig', write(path.join(t.home, '.gitconfig')));
  record('write outside the repository', write(t.outside));
  // Gate files of the project, existing and not yet existing.
  for (const file of t.gateWrites) record(`write ${file}`, write(file));
  for (const [from, to] of t.renames) record(`rename ${from}`, () => fs.renameSync(from, to));
  for (const file of t.removes) record(`remove ${file}`, () => fs.unlinkSync(file));
  // Credentials and assent's state.
  record('read ~/.ssh/id_rsa', readCanary(path.join(t.home, '.ssh', 'id_rsa')));
  record('read ~/.npmrc', readCanary(path.join(t.home, '.npmrc')));
  for (const file of t.secretReads) record(`read ${file}`, readCanary(file));
  record('read journal.db', () => fs.readFileSync(path.join(t.assentHome, 'journal.db')).length);
  // Other processes: the daemon and the agent (the test process).
  record('kill the daemon', () => process.kill(t.daemonPid, 'SIGKILL'));
  record('open the agent /proc/PID/mem', () => fs.closeSync(fs.openSync(`/proc/${t.agentPid}/mem`, 'r')));
  record('strace -p the agent', () => {
    const run = spawnSync('strace', ['-p', String(t.agentPid), '-e', 'trace=none'], { timeout: 1500, encoding: 'utf8' });
    if (!/attached/i.test(run.stderr ?? '')) throw new Error((run.stderr ?? run.error?.message ?? '').trim().split('\n')[0]);
    return run.stderr;
  });
  // The terminal: push a keystroke into its input queue.
  if (process.stdin.isTTY) {
    record('TIOCSTI into the terminal', () => {
      const run = spawnSync('perl', ['-e', 'my $c = "X"; ioctl(STDIN, 0x5412, $c) or die "$!\\n"; print "injected\\n"'], { stdio: ['inherit', 'pipe', 'pipe'], encoding: 'utf8' });
      if (run.status !== 0) throw new Error(run.stderr.trim());
      return run.stdout;
    });
  }
  // Network and sockets.
  results['connect 127.0.0.1'] = await connect({ host: '127.0.0.1', port: t.tcpPort });
  results['resolve a name'] = await new Promise((resolve) =>
    dns.lookup('example.com', (error, address) => resolve(error ? { ok: false, detail: error.code } : { ok: true, detail: address })),
  );
  results["connect assent's socket"] = await connect({ path: t.assentSocket });
  results['connect a socket in another directory'] = await connect({ path: t.otherSocket });
  // A process that outlives the command.
  record('leave a process running', () => {
    const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, CONFINE_MARK: t.mark } });
    child.unref();
    fs.writeFileSync(path.join('src', 'sleep.pid'), `${child.pid}\n`);
    return child.pid;
  });
  // What a test run must still be able to do.
  const status = spawnSync('git', ['status', '--porcelain'], { encoding: 'utf8' });
  results['git status'] = { ok: status.status === 0, detail: status.status === 0 ? 'ran' : status.stderr };
  fs.writeFileSync(path.join('src', 'out.txt'), 'written by npm test\n');
  fs.writeFileSync(path.join('src', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${t.stdoutMark}\n`);
}

await main();
