/**
 * The records survive a crash of their server, on the deployment's Redis (testkit's
 * privateStackRedis: the stack's ACL file, each writer as its own user, the records' server with
 * an append-only file fsynced on every write, as `npm start` and compose run it): an audit record
 * (the signer's script), an operator's halt and its log entry, a ledger's trip, an integrator and
 * its key are all there after `kill -9` and a restart.
 *
 * Why it is a test of its own: Redis replays a script that writes more than once as MULTI/EXEC,
 * and checks such a transaction against the DEFAULT user's rights while it loads the append-only
 * file (redis/redis#14541, in 7.0 to 8.x before the fix). A default user without rights made the
 * restarted server drop the audit trail and the halts without a word, and keep the single-command
 * records beside them (core's redis-acl.ts DEFAULT_USER_OFF).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DurableWrites,
  HaltStore,
  createRedis,
  haltScopeName,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { ApiKeyStore } from '@pmm/gateway';
import { RedisAuditTrail } from '@pmm/signer';
import { privateStackRedis, sampleAuditRecord, type PrivateStackRedis } from '@pmm/testkit';
import { AuditReader } from '../../../operator/src/audit-trail/audit-reader';

const keys = redisKeys('pmm');
const fsynced = () => ({ mode: 'fsync' as const, replicas: 1, waitTimeoutMs: 1_000 });
let dir: string;
let stack: PrivateStackRedis;
const clients: RedisClient[] = [];

async function connect(url: string, name: string): Promise<RedisClient> {
  const client = createRedis(url, { name });
  clients.push(client);
  await redisReady(client, 10_000);
  return client;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'pmm-records-restart-'));
  stack = await privateStackRedis({ dir, args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("behavior: the audit trail, the operator's halts and their log, a ledger's trip, integrators and keys survive kill -9 of the records' server", async () => {
  const records = (user: string) => connect(stack.urlOf(user, 'records'), `restart-${user}`);
  const signer = await records('signer');
  const trail = new RedisAuditTrail({
    keys,
    retentionMs: 86_400_000,
    durability: new DurableWrites(signer, fsynced()),
  });
  const record = sampleAuditRecord(7, { integratorId: 'acme' });
  await trail.record(record);
  const risk = await records('risk');
  const halt = { scope: { chainId: 56 }, reason: 'before the crash', by: 'test', at: 1 };
  expect(await new DurableWrites(risk, fsynced()).run((lane) => new HaltStore(lane, keys).halt(halt))).toEqual({
    made: true,
  });
  const ledger = await records('ledger-8453');
  const trip = {
    scope: { integratorId: 'acme' },
    reason: 'limit integrator-notional',
    by: 'ledger-8453',
    at: 2,
    trip: { limit: 'integrator-notional', value: '2', threshold: '1' },
  };
  expect(await new HaltStore(ledger, keys).trip(8453, trip)).toEqual({ made: true });
  const keysUser = await records('keys');
  const store = new ApiKeyStore(keysUser, 'pmm');
  await store.putIntegrator({
    id: 'acme',
    name: 'acme',
    whitelist: [],
    chains: [],
    rateLimit: { requests: 10, windowSeconds: 1 },
    disabled: false,
  });
  const { record: key } = await store.issueKey('acme');

  await stack.records.stop('SIGKILL');
  await stack.records.start();

  const operator = await records('operator');
  const found = await new AuditReader(operator, keys).bySignature(8453, record.signature, record.timestamp);
  expect(found.map((f) => f.record.requestId)).toEqual([record.requestId]);
  const after = await connect(stack.urlOf('risk', 'records'), 'restart-risk-after');
  const active = await new HaltStore(after, keys).active();
  expect(active.map((h) => [haltScopeName(h.scope), h.by])).toEqual([
    ['chain=56', 'test'],
    ['integrator=acme', 'ledger-8453'],
  ]);
  expect((await new HaltStore(after, keys).history()).events.map((e) => e.reason)).toEqual(['before the crash']);
  const keysAfter = new ApiKeyStore(await records('keys'), 'pmm');
  expect((await keysAfter.getIntegrator('acme'))?.id).toBe('acme');
  expect((await keysAfter.findByKeyId(key.keyId))?.key).toEqual(key);
}, 60_000);
