/**
 * The signer in replica mode (`REDIS_DURABILITY=replica`) against a real primary with one
 * replica (the shipped replicated settings; testkit's privateReplicatedRedis): the real signer
 * (startSigner, its audit connections and trail) answered over HTTP. Signs whose records arrive
 * while every audit connection waits for the replica share the next WAIT (the primary counts
 * them: INFO commandstats), and a sign is answered only once WAIT counted every replica asked
 * for: short, it is a 503 and no signature leaves.
 */
import { createRedis, redisReady, type RedisClient } from '@pmm/core';
import { privateReplicatedRedis, until, type PrivateReplicatedRedis } from '@pmm/testkit';
import { RedisAuditTrail } from '../../src';
import { auditRequestIdsOn, signOnce, startDrillSigner, type DrillSigner } from '../support/sign-drill';

let nodes: PrivateReplicatedRedis;
let admin: RedisClient;
let signer: DrillSigner | undefined;

beforeAll(async () => {
  // The replica is paused below for as long as the signs take to arrive: the primary must not
  // refuse writes for its lag meanwhile (min-replicas-max-lag is the deployment's 10 s).
  nodes = await privateReplicatedRedis({ replicas: 1, args: ['--min-replicas-max-lag', '120'] });
  admin = createRedis(nodes.url, { name: 'durable-replica-test' });
  await redisReady(admin, 15_000);
}, 60_000);

afterEach(async () => {
  nodes.replicas[0]!.resume();
  jest.restoreAllMocks();
  await signer?.close();
  signer = undefined;
});

afterAll(async () => {
  admin?.disconnect();
  await nodes?.stop();
});

/** WAITs the primary has run so far (a blocked one counts once it returns). */
async function waitsRun(): Promise<number> {
  const stats = String(await admin.call('INFO', 'commandstats'));
  return Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

/** One sign straight to the signer (the gateway's headers): its status and body. */
const sign = (url: string, i: number) => signOnce(url, `durable-${i}`, 1 + i);

/** REDIS_AUDIT_LANES of the first case: not the default (4), so that the bound below follows the setting. */
const LANES = 3;

it('behavior: signs that arrive while every audit connection waits for the replica share the next WAIT; each answered sign has its record on the replica', async () => {
  signer = await startDrillSigner(nodes.url, {
    REDIS_DURABILITY: 'replica',
    REDIS_DURABLE_REPLICAS: '1',
    REDIS_DURABLE_WAIT_MS: '10000',
    REDIS_AUDIT_LANES: String(LANES),
  });
  // One connection per lane, by name.
  const lanes = String(await admin.call('CLIENT', 'LIST')).match(/name=signer-audit\S*/g) ?? [];
  expect(lanes).toHaveLength(LANES);
  const records = jest.spyOn(RedisAuditTrail.prototype, 'record');
  const before = await waitsRun();
  nodes.replicas[0]!.pause();
  let answered = 0;
  const signs = Array.from({ length: 40 }, (_, i) =>
    sign(signer!.url, i).then((r) => {
      answered++;
      return r;
    }),
  );
  // Every sign signed and its record handed to the trail, and none answered: no WAIT can
  // return while the replica is paused.
  await until(() => records.mock.calls.length === 40, 8_000, 'the 40 records handed to the trail', 20);
  expect(answered).toBe(0);
  // Every lane holds a WAIT: the signer is still ready (a PING on a lane would queue behind it).
  expect((await fetch(new URL('/readyz', signer.url), { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
  nodes.replicas[0]!.resume();
  const results = await Promise.all(signs);
  expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
  // The first flight of each audit connection, then one for all that waited: at most one more
  // per connection, whichever lands first (one WAIT per record without it).
  expect((await waitsRun()) - before).toBeLessThanOrEqual(2 * LANES);
  expect(await auditRequestIdsOn(nodes.replicas[0]!.url, signer.prefix)).toEqual(
    new Set(Array.from({ length: 40 }, (_, i) => `durable-${i}`)),
  );
}, 60_000);

it('error: fewer replica acknowledgements than REDIS_DURABLE_REPLICAS asks: every sign is a 503 in the envelope, no signature leaves', async () => {
  // Two replicas asked of a primary that has one.
  signer = await startDrillSigner(nodes.url, {
    REDIS_DURABILITY: 'replica',
    REDIS_DURABLE_REPLICAS: '2',
    REDIS_DURABLE_WAIT_MS: '200',
  });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => sign(signer!.url, 100 + i)));
  expect(results.map((r) => r.status)).toEqual(Array(10).fill(503));
  for (const r of results) {
    const body = JSON.parse(r.body) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(r.body).not.toContain('verificationData');
  }
}, 60_000);

it('error: a replica that stops acknowledging turns signs into 503 within the WAIT timeout; once it is back they are answered again', async () => {
  signer = await startDrillSigner(nodes.url, {
    REDIS_DURABILITY: 'replica',
    REDIS_DURABLE_REPLICAS: '1',
    REDIS_DURABLE_WAIT_MS: '300',
  });
  expect((await sign(signer.url, 200)).status).toBe(200);
  nodes.replicas[0]!.pause();
  const refused = await Promise.all(Array.from({ length: 5 }, (_, i) => sign(signer!.url, 201 + i)));
  nodes.replicas[0]!.resume();
  expect(refused.map((r) => r.status)).toEqual(Array(5).fill(503));
  await until(async () => (await sign(signer!.url, 300)).status === 200, 20_000, 'signing again', 100);
}, 60_000);
