/**
 * runService, the process shell of every main.ts: exit codes, what start-up failures print,
 * unhandled rejections, and the drain on SIGTERM. Each case runs the fixture as a process.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');
const FIXTURE = path.join(__dirname, '../support/run-service-fixture.ts');

function run(mode: string, args: string[] = []) {
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'scripts/lib/ts-register.cjs'), FIXTURE, ...args], {
    env: { ...process.env, FIXTURE_MODE: mode },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => out;
  const waitFor = async (text: string) => {
    const start = Date.now();
    while (!out.includes(text)) {
      if (Date.now() - start > 20_000) throw new Error(`no "${text}" in:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, exited, output, waitFor };
}

describe('runService', () => {
  it('behavior: --help lists the settings and exits 0', async () => {
    const p = run('ok', ['--help']);
    expect(await p.exited).toBe(0);
    expect(p.output()).toContain('fixture settings');
    expect(p.output()).toContain('PORT (port; default 0): Port.');
  }, 30_000);

  it('error: a configuration error exits 1 with its message', async () => {
    const p = run('bad-config');
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('fixture: cannot start: PORT: must be an integer');
  }, 30_000);

  it('error: an unexpected start-up failure exits 1 and prints its type, not its text', async () => {
    const p = run('throw');
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('fixture: cannot start: unexpected start-up failure (Error)');
    expect(
      p
        .output()
        .split('\n')
        .filter((l) => l.startsWith('fixture:'))
        .join('\n'),
    ).not.toContain('sk-should');
  }, 30_000);

  it('behavior: an unhandled rejection is logged and the service keeps running; SIGTERM drains, closes, exits 0', async () => {
    const p = run('reject');
    await p.waitFor('listening');
    await p.waitFor('"message":"unhandled rejection"');
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/shutting down[\s\S]*closed[\s\S]*"message":"stopped"/);
  }, 30_000);
});
