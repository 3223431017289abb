/**
 * The signer in replica mode on a Redis Cluster whose masters have a replica each (what
 * `REDIS_DURABILITY=auto` picks for a `redis-cluster://` URL): a `WAIT` per master, each on the
 * connection the writes went through (core's durable-writes.ts). The real signer (startSigner)
 * over HTTP; the replicas stalled (SIGSTOP) or killed one at a time.
 */
import { closeRedis, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { privateRedisCluster, until, type PrivateRedisCluster } from '@pmm/testkit';
import { auditRequestIdsOn, signOnce, startDrillSigner, type DrillSigner } from '../support/sign-drill';

let cluster: PrivateRedisCluster;
let signer: DrillSigner | undefined;

beforeAll(async () => {
  cluster = await privateRedisCluster({ replicas: 1 });
}, 60_000);

afterEach(async () => {
  for (const node of cluster.nodes.values()) node.kill('SIGCONT');
  await signer?.close();
  signer = undefined;
});

afterAll(async () => {
  await cluster?.stop();
});

let counter = 0;

/** One sign straight to the signer (the gateway's headers): its status and request id. */
async function sign(url: string): Promise<{ status: number; requestId: string }> {
  const requestId = `cluster-${++counter}`;
  const { status } = await signOnce(url, requestId, 1 + (counter % 5_000));
  return { status, requestId };
}

/** A plain connection to one node (a replica reads its master's slots after READONLY). */
async function nodeClient(port: number): Promise<RedisClient> {
  const client = createRedis(`redis://127.0.0.1:${port}`, { name: 'cluster-replica-test' });
  await redisReady(client, 10_000);
  return client;
}

/** The shard holding chain 8453's audit trail under `prefix` (the master that has the key). */
async function auditShard(prefix: string): Promise<{ master: number; replicas: number[] }> {
  for (const shard of cluster.shards) {
    const master = await nodeClient(shard.master);
    try {
      const slot = Number(await master.call('CLUSTER', 'KEYSLOT', redisKeys(prefix).audit(8453)));
      const keys = Number(await master.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)));
      if (keys > 0) return shard;
    } finally {
      await closeRedis(master);
    }
  }
  throw new Error('no master holds the audit trail');
}

/** The request ids of chain 8453's audit records as the replica at `port` holds them. */
const requestIdsOnReplica = (port: number, prefix: string) =>
  auditRequestIdsOn(`redis://127.0.0.1:${port}`, prefix, { clusterReplica: true });

const REPLICA_MODE = { REDIS_DURABILITY: 'replica', REDIS_DURABLE_REPLICAS: '1', REDIS_DURABLE_WAIT_MS: '300' };

it('behavior: every answered sign has its record on the replica of the master that holds the chain’s audit trail', async () => {
  signer = await startDrillSigner(cluster.url, { REDIS_DURABILITY: 'auto' });
  const answers = await Promise.all(Array.from({ length: 20 }, () => sign(signer!.url)));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  const shard = await auditShard(signer.prefix);
  const onReplica = await requestIdsOnReplica(shard.replicas[0]!, signer.prefix);
  for (const { requestId } of answers) expect(onReplica).toContain(requestId);
}, 60_000);

it('error: the replica of the audit trail’s master stalled: signs are 503 within the WAIT timeout; back, they are answered again', async () => {
  signer = await startDrillSigner(cluster.url, REPLICA_MODE);
  expect((await sign(signer.url)).status).toBe(200);
  const replica = cluster.nodes.get((await auditShard(signer.prefix)).replicas[0]!)!;
  replica.kill('SIGSTOP');
  const refused = await Promise.all(Array.from({ length: 5 }, () => sign(signer!.url)));
  replica.kill('SIGCONT');
  expect(refused.map((r) => r.status)).toEqual(Array(5).fill(503));
  await until(async () => (await sign(signer!.url)).status === 200, 20_000, 'signing again', 100);
}, 60_000);

it('behavior: a replica of another master stalled or gone changes nothing: the records are confirmed where they are', async () => {
  signer = await startDrillSigner(cluster.url, REPLICA_MODE);
  expect((await sign(signer.url)).status).toBe(200);
  const audit = await auditShard(signer.prefix);
  const other = cluster.shards.find((s) => s.master !== audit.master)!;
  const replica = cluster.nodes.get(other.replicas[0]!)!;
  replica.kill('SIGSTOP');
  const whileStalled = await Promise.all(Array.from({ length: 5 }, () => sign(signer!.url)));
  replica.kill('SIGCONT');
  expect(whileStalled.map((r) => r.status)).toEqual(Array(5).fill(200));
  // Gone: its master drops the link at once, and has no replica left.
  replica.kill('SIGKILL');
  const otherMaster = await nodeClient(other.master);
  try {
    await until(
      async () => /connected_slaves:0/.test(String(await otherMaster.call('INFO', 'replication'))),
      10_000,
      'the other master without its replica',
      50,
    );
  } finally {
    await closeRedis(otherMaster);
  }
  const whileGone = await Promise.all(Array.from({ length: 5 }, () => sign(signer!.url)));
  expect(whileGone.map((r) => r.status)).toEqual(Array(5).fill(200));
}, 60_000);

it('behavior: a record redirected to another master (MOVED: the slot moved since the signer last looked) waits for that master’s replica', async () => {
  signer = await startDrillSigner(cluster.url, REPLICA_MODE);
  // The signer's client learns where the audit slot is.
  expect((await sign(signer.url)).status).toBe(200);
  const source = await auditShard(signer.prefix);
  // A shard whose replica runs (the case above killed one).
  const alive = (port: number) => cluster.nodes.get(port)!.exitCode === null && !cluster.nodes.get(port)!.signalCode;
  const target = cluster.shards.find((s) => s.master !== source.master && alive(s.replicas[0]!))!;
  const [from, to] = await Promise.all([nodeClient(source.master), nodeClient(target.master)]);
  try {
    // The slot moved whole to the target, as `redis-cli --cluster reshard` does.
    const [fromId, toId] = await Promise.all([from.call('CLUSTER', 'MYID'), to.call('CLUSTER', 'MYID')]);
    const slot = String(await from.call('CLUSTER', 'KEYSLOT', redisKeys(signer.prefix).audit(8453)));
    await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', String(fromId));
    await from.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', String(toId));
    const keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, '100')) as string[];
    await from.call('MIGRATE', '127.0.0.1', String(target.master), '', '0', '5000', 'KEYS', ...keys);
    for (const client of [to, from]) await client.call('CLUSTER', 'SETSLOT', slot, 'NODE', String(toId));
    // The next write goes to the source, is answered MOVED and lands on the target, whose
    // replica is stalled: confirmed only if the WAIT follows it there.
    const targetReplica = cluster.nodes.get(target.replicas[0]!)!;
    targetReplica.kill('SIGSTOP');
    const redirected = await sign(signer.url);
    targetReplica.kill('SIGCONT');
    expect(redirected.status).toBe(503);
    let after = { status: 0, requestId: '' };
    await until(async () => (after = await sign(signer!.url)).status === 200, 20_000, 'signing again', 100);
    expect(await requestIdsOnReplica(target.replicas[0]!, signer.prefix)).toContain(after.requestId);
  } finally {
    await Promise.all([closeRedis(from), closeRedis(to)]);
  }
}, 60_000);
