/**
 * The price stream with the gateway as a process (src/main.ts through the TypeScript require
 * hook, as production runs dist/main.js): SIGTERM ends open streams at once (the drain does
 * not wait for them) and the process exits 0; a SIGKILLed replica's stream slots free
 * themselves when their leases lapse, so the per-key limit does not leak.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { stopProcess } from '@pmm/testkit';
import { bookBody, harness, type Harness } from '../support/harness';
import { openStream, type SseStream } from '../support/sse-client';

const ROOT = path.resolve(__dirname, '../../../..');
const MAIN = path.join(ROOT, 'services/gateway/src/main.ts');
const REGISTER = path.join(ROOT, 'scripts/lib/ts-register.cjs');
const LEASE_MS = 900;

let h: Harness;
const children: ChildProcessWithoutNullStreams[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  h = await harness();
  await h.putBook(8453, bookBody(8453, 10));
});
afterAll(async () => {
  for (const s of streams) s.close();
  for (const c of children) await stopProcess(c, 'SIGKILL');
  await h.cleanup();
});

async function startGateway(): Promise<{ child: ChildProcessWithoutNullStreams; base: string; output: () => string }> {
  const child = spawn(process.execPath, ['-r', REGISTER, MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: h.prefix,
      INTERNAL_TOKEN: 'test-internal-token-0123456789',
      PORT: '0',
      OPS_PORT: '0',
      STREAMS_PER_KEY: '1',
      STREAM_LEASE_MS: String(LEASE_MS),
    },
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const start = Date.now();
  for (;;) {
    const m = /"message":"gateway listening".*?"port":(\d+)/.exec(out);
    if (m) return { child, base: `http://127.0.0.1:${m[1]}`, output: () => out };
    if (Date.now() - start > 30_000 || child.exitCode !== null) throw new Error(`gateway did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function open(base: string, key: string): Promise<SseStream> {
  const s = await openStream(base, '/v2/price/stream', { 'X-API-KEY': key });
  streams.push(s);
  return s;
}

describe('price stream in the gateway process', () => {
  it('behavior: SIGTERM ends open streams at once and the process exits 0', async () => {
    const gw = await startGateway();
    const key = await h.apiKey();
    const s = await open(gw.base, key);
    expect(s.status).toBe(200);
    await s.waitFor(1);
    const exited = new Promise<number | null>((r) => gw.child.once('exit', (code) => r(code)));
    const t0 = Date.now();
    gw.child.kill('SIGTERM');
    await s.ended;
    expect(await exited).toBe(0);
    // Far below the 10 s drain timeout that a stream left open would cost.
    expect(Date.now() - t0).toBeLessThan(5_000);
  }, 60_000);

  it('behavior: a killed replica does not leak its slots: they free when the leases lapse', async () => {
    const [a, b] = await Promise.all([startGateway(), startGateway()]);
    const key = await h.apiKey();
    const s = await open(a.base, key);
    expect(s.status).toBe(200);
    const refused = await request(b.base).get('/v2/price/stream').set('X-API-KEY', key);
    expect(refused.status).toBe(429);
    await stopProcess(a.child, 'SIGKILL');
    const killedAt = Date.now();
    let status = 0;
    while (status !== 200) {
      if (Date.now() - killedAt > LEASE_MS * 5) throw new Error('slot still taken long after the lease');
      await new Promise((r) => setTimeout(r, 100));
      const again = await open(b.base, key);
      status = again.status;
      if (status !== 200) again.close();
    }
  }, 60_000);
});
