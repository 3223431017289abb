/**
 * The price stream with the gateway as a process (its build, as `npm start` runs it: testkit's
 * startService): SIGTERM ends open streams at once (the drain does not wait for them) and the
 * process exits 0; a SIGKILLed replica's stream slots free themselves when their leases lapse,
 * so the per-key limit does not leak.
 */
import request from 'supertest';
import { freePort, startService, stopProcess, type ServiceProcess } from '@pmm/testkit';
import { REDIS_URL, bookBody, harness, type Harness } from '../support/harness';
import { openStream, type SseStream } from '../support/sse-client';

const LEASE_MS = 900;

let h: Harness;
const gateways: ServiceProcess[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  h = await harness();
  await h.putBook(8453, bookBody(8453, 10));
});
afterAll(async () => {
  for (const s of streams) s.close();
  for (const g of gateways) await g.stop('SIGKILL');
  await h.cleanup();
});

/** A gateway process on this file's Redis prefix, with no signer (its health, not its readiness, is awaited). */
async function startGateway(): Promise<ServiceProcess & { base: string }> {
  const [port, opsPort] = [await freePort(), await freePort()];
  const gw = await startService('gateway', {
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: h.prefix,
      INTERNAL_TOKEN: 'test-internal-token-0123456789',
      PORT: String(port),
      OPS_PORT: String(opsPort),
      STREAMS_PER_KEY: '1',
      STREAM_LEASE_MS: String(LEASE_MS),
    },
    readyUrl: `http://127.0.0.1:${opsPort}/healthz`,
  });
  gateways.push(gw);
  return Object.assign(gw, { base: `http://127.0.0.1:${port}` });
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
