/**
 * The local stack's supervisor (scripts/lib/supervisor.mjs), driven in its own Node process
 * (it is an ES module script) over a real child process: a killed part is logged and started
 * again with backoff; stop() ends it for good and leaves no process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const supervisorUrl = `file://${path.resolve(__dirname, '..', '..', '..', '..', 'scripts', 'lib', 'supervisor.mjs')}`;

/** A driver supervising `node -e <sleeper>`; prints `pid <n>` per (re)start, log lines, `stopped`. */
const DRIVER = `
import { supervise } from '${supervisorUrl}';
const part = supervise({
  name: 'sleeper',
  command: process.execPath,
  args: ['-e', 'setInterval(() => {}, 1000)'],
  options: { stdio: 'ignore' },
  ready: async (child) => console.log('pid ' + child.pid),
  log: (line) => console.log('log ' + line),
  timing: { minMs: 100, maxMs: 400, stableMs: 60000 },
});
await part.ready();
process.stdin.on('data', async () => {
  const pid = part.child.pid;
  await part.stop();
  console.log('stopped ' + pid);
  process.exit(0);
});
`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('stack supervisor', () => {
  let driver: ChildProcess;
  let output = '';
  const waitFor = async (re: RegExp, count = 1): Promise<RegExpMatchArray[]> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const matches = [...output.matchAll(new RegExp(re, 'g'))];
      if (matches.length >= count) return matches;
      if (Date.now() > deadline) throw new Error(`no ${count}× ${re} in:\n${output}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(() => {
    driver = spawn(process.execPath, ['--input-type=module', '-e', DRIVER], { stdio: ['pipe', 'pipe', 'pipe'] });
    driver.stdout!.on('data', (d) => (output += String(d)));
    driver.stderr!.on('data', (d) => (output += String(d)));
  });
  afterAll(() => {
    if (driver.exitCode === null) driver.kill('SIGKILL');
  });

  it('behavior: a killed part is logged and restarted, with a growing delay', async () => {
    const [first] = await waitFor(/pid (\d+)/);
    const pid1 = Number(first![1]);
    process.kill(pid1, 'SIGKILL');
    const second = await waitFor(/pid (\d+)/, 2);
    const pid2 = Number(second[1]![1]);
    expect(pid2).not.toBe(pid1);
    expect(output).toContain('log sleeper exited unexpectedly (SIGKILL); restarting in 0.1 s (restart 1)');
    process.kill(pid2, 'SIGKILL');
    await waitFor(/pid (\d+)/, 3);
    expect(output).toContain('restarting in 0.2 s (restart 2)');
    expect(output).toContain('log sleeper restarted and ready');
  });

  it('behavior: stop() ends the part for good and leaves no process', async () => {
    driver.stdin!.write('stop\n');
    const [stopped] = await waitFor(/stopped (\d+)/);
    const pid = Number(stopped![1]);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(pid)).toBe(false);
    expect(output).not.toMatch(/restart 3/);
    await new Promise<void>((resolve) => (driver.exitCode !== null ? resolve() : driver.once('exit', () => resolve())));
    expect(driver.exitCode).toBe(0);
  });

  it('behavior: a part that exits while the stack shuts down is neither reported nor restarted (Ctrl-C reaches it first)', async () => {
    const shutdownDriver = `
import { supervise } from '${supervisorUrl}';
let down = false;
const part = supervise({
  name: 'sleeper',
  command: process.execPath,
  args: ['-e', 'setInterval(() => {}, 1000)'],
  options: { stdio: 'ignore' },
  log: (line) => console.log('log ' + line),
  timing: { minMs: 50, maxMs: 50, stableMs: 60000 },
  shuttingDown: () => down,
});
down = true;
const child = part.child;
child.kill('SIGINT');
// Once it has exited (or after 10 s, when it has not), and 300 ms more for a restart that must not come.
const report = () => setTimeout(() => {
  console.log('restarts ' + part.restarts + ' pid-alive ' + (child.exitCode === null && child.signalCode === null));
  process.exit(0);
}, 300);
const noExit = setTimeout(report, 10000);
child.once('exit', () => { clearTimeout(noExit); report(); });
`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', shutdownDriver], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    expect(out).toContain('restarts 0 pid-alive false');
    expect(out).not.toContain('exited unexpectedly');
  });
});
