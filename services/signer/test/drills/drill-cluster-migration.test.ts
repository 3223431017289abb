/**
 * Drill: a Redis Cluster slot migration under a paced sign load. Three masters that fsync each
 * write (REDIS_DURABILITY=fsync: every master is checked), the real signer on
 * `redis-cluster://…`, and the slot of chain 8453's audit keys moved to another master while
 * signing, key by key, as `redis-cli --cluster reshard` does (MIGRATING/IMPORTING, MIGRATE,
 * SETSLOT NODE). A script call caught by the move meets ASK, TRYAGAIN or MOVED, and a node that
 * never ran the script NOSCRIPT: each is retried (ioredis) or fails the sign with 503, and no
 * signature a client received is without its record.
 */
import { createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { loadReport, privateRedisCluster, type PrivateRedisCluster } from '@pmm/testkit';
import {
  DRILL_SIGNS_PER_SECOND,
  lostRecords,
  signerLoad,
  startDrillSigner,
  type DrillSigner,
} from '../support/sign-drill';

let cluster: PrivateRedisCluster;
let signer: DrillSigner | undefined;
const admins: RedisClient[] = [];

beforeAll(async () => {
  cluster = await privateRedisCluster({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
}, 60_000);

afterAll(async () => {
  await signer?.close();
  for (const a of admins) a.disconnect();
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A plain connection to one node (CLUSTER and MIGRATE are per node). */
async function admin(port: number): Promise<RedisClient> {
  const c = createRedis(`redis://127.0.0.1:${port}`, { name: 'drill-cluster-admin' });
  admins.push(c);
  await redisReady(c);
  return c;
}

it('drill: moving the audit slot to another master during a paced sign load loses no record', async () => {
  const nodes = await Promise.all(cluster.ports.map(async (port) => ({ port, redis: await admin(port) })));
  const ids = await Promise.all(nodes.map(async (n) => String(await n.redis.call('CLUSTER', 'MYID'))));
  signer = await startDrillSigner(cluster.url, { REDIS_DURABILITY: 'fsync' });
  const slot = Number(await nodes[0]!.redis.call('CLUSTER', 'KEYSLOT', redisKeys(signer.prefix).audit(8453)));
  const owner = async () => {
    for (const [i, n] of nodes.entries()) {
      const keys = (await n.redis.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot))) as number;
      const mine = String(await n.redis.call('CLUSTER', 'NODES'))
        .split('\n')
        .find((l) => l.includes('myself'))!;
      if (keys > 0 || slotRanges(mine).some(([a, b]) => slot >= a && slot <= b)) return i;
    }
    throw new Error(`no node owns slot ${slot}`);
  };

  const load = signerLoad(signer.url, DRILL_SIGNS_PER_SECOND);
  await sleep(1_500);
  const from = await owner();
  const to = (from + 1) % nodes.length;
  const [source, target] = [nodes[from]!, nodes[to]!];
  await target.redis.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', ids[from]!);
  await source.redis.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', ids[to]!);
  let moved = 0;
  for (;;) {
    // One key at a time with a pause: the window in which the chain's keys are split is wide.
    const keys = (await source.redis.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '1')) as string[];
    if (keys.length === 0) break;
    await source.redis.call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', ...keys);
    moved += keys.length;
    await sleep(100);
  }
  for (const n of [target, source, ...nodes.filter((_, i) => i !== from && i !== to)])
    await n.redis.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', ids[to]!);
  const movedAt = Date.now() - load.started;
  await sleep(2_000);
  const result = await load.stop();

  const missing = await lostRecords(cluster.url, signer.prefix, result.ok);
  const after = result.ok.filter((a) => a.at > movedAt).length;
  console.log(
    loadReport(
      'Cluster slot migration drill',
      result,
      missing.length,
      `slot ${slot} moved from node ${from} to node ${to} (${moved} keys); answered 200 after the move ${after}`,
    ),
  );
  expect(missing).toEqual([]);
  expect(await owner()).toBe(to);
  expect(moved).toBeGreaterThan(0);
  expect(after).toBeGreaterThan(0);
}, 180_000); // 42 s in a quiet full run, over 90 s at a load average of 15 to 25

/** The slot ranges a CLUSTER NODES line lists (`a-b` or `a`; importing/migrating markers skipped). */
function slotRanges(line: string): [number, number][] {
  return line
    .split(' ')
    .slice(8)
    .filter((f) => /^\d+(-\d+)?$/.test(f))
    .map((f) => {
      const [a, b] = f.split('-').map(Number);
      return [a!, b ?? a!];
    });
}
