/**
 * privateStackRedis: two servers with `npm start`'s users. Each user reaches its own keys and is
 * refused another role's, the default user only PINGs, the administrator may do anything, the
 * two servers hold different data, and a server started again still has its users.
 */
import { closeRedis, createRedis, redisKeys, type RedisClient } from '@pmm/core';
import { commandOutcome, privateStackRedis, type PrivateStackRedis } from '../src';

const keys = redisKeys('pmm');
let stack: PrivateStackRedis;
const clients: RedisClient[] = [];

/** A connection that sends nothing before the test's commands (no INFO ready check). */
function connect(url: string): RedisClient {
  const client = createRedis(url, { name: 'private-stack-redis-test', role: 'subscriber' });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  stack = await privateStackRedis({ chainIds: [8453, 56] });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => closeRedis(c)));
  await stack?.stop();
});

describe('privateStackRedis', () => {
  it('security: a connection that logs in as no one (the default user, off) can do nothing on either server, PING included', async () => {
    for (const server of [stack.records, stack.rebuildable]) {
      const anonymous = connect(server.url);
      expect(await commandOutcome(() => anonymous.ping())).toBe('NOAUTH');
      expect(await commandOutcome(() => anonymous.get(keys.book(8453)))).toBe('NOAUTH');
      expect(await commandOutcome(() => anonymous.call('FLUSHALL'))).toBe('NOAUTH');
    }
  });

  it('behavior: envOf gives a user its URL on each server, as npm start does, and the two servers hold different data', async () => {
    const env = stack.envOf('signer');
    expect(env).toEqual({
      REDIS_URL: stack.urlOf('signer', 'rebuildable'),
      REDIS_RECORDS_URL: stack.urlOf('signer', 'records'),
    });
    expect(new URL(env.REDIS_URL).port).toBe(String(stack.rebuildable.port));
    expect(new URL(env.REDIS_RECORDS_URL).port).toBe(String(stack.records.port));
    expect(stack.records.port).not.toBe(stack.rebuildable.port);
    const records = connect(stack.recordsUrl);
    const rebuildable = connect(stack.rebuildableUrl);
    await records.set('only-on-records', '1');
    expect(await rebuildable.exists('only-on-records')).toBe(0);
    expect(await records.call('ACL', 'WHOAMI')).toBe('admin');
  });

  it("security: each stack user reaches its own keys and is refused another role's", async () => {
    const risk = connect(stack.urlOf('risk', 'records'));
    expect(await risk.hset(keys.halts(), 'chain:8453', '{}')).toBe(1);
    expect(await commandOutcome(() => risk.set(keys.apiKey('f'.repeat(64)), '{}'))).toBe('NOPERM');
    const indexer = connect(stack.urlOf('indexer-8453', 'rebuildable'));
    expect(await indexer.set(keys.book(8453), '{}')).toBe('OK');
    expect(await commandOutcome(() => indexer.set(keys.book(56), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.hset(keys.halts(), 'chain:8453', '{}'))).toBe('NOPERM');
    const operator = connect(stack.urlOf('operator', 'records'));
    expect(await operator.xlen(keys.audit(8453))).toBe(0);
    expect(await commandOutcome(() => operator.del(keys.audit(8453)))).toBe('NOPERM');
    // devKey (the default): the gateway may seed the development integrator.
    const gateway = connect(stack.urlOf('gateway', 'records'));
    expect(await gateway.set(keys.integrator('dev'), '{}')).toBe('OK');
    expect(await commandOutcome(() => gateway.set(keys.integrator('other'), '{}'))).toBe('NOPERM');
  });

  it('error: a user that is not a stack user of these chains has no URL', () => {
    expect(() => stack.urlOf('indexer-4663', 'rebuildable')).toThrow(/no stack user indexer-4663/);
    expect(() => stack.envOf('nobody')).toThrow(/no stack user nobody/);
  });

  it('behavior: a server stopped and started again keeps its users (the ACL comes with each start), not its data', async () => {
    await connect(stack.rebuildableUrl).set('gone-after-restart', '1');
    // Every connection closed before its server goes: ioredis keeps a timer alive for one closed
    // while it is lost.
    await Promise.all(clients.splice(0).map((c) => closeRedis(c)));
    await stack.rebuildable.stop();
    await stack.rebuildable.start();
    const after = connect(stack.urlOf('indexer-56', 'rebuildable'));
    expect(await after.set(keys.book(56), '{}')).toBe('OK');
    expect(await connect(stack.rebuildableUrl).exists('gone-after-restart')).toBe(0);
  });
});
