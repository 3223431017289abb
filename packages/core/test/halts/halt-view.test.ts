/**
 * core's HaltView (what the signer and the gateway read the halts through) and HaltStore over a
 * real Redis: a halt reaches the view by its notice, and without one by the re-read; the view
 * answers only while its last good read started less than maxAgeMs ago (the clock is the test's),
 * so a Redis that stops answering, or a record that does not parse, makes it refuse (fail closed).
 * The scope rules are pure and tested in halt-scope.test.ts.
 */
import { randomUUID } from 'node:crypto';
import {
  DurableWrites,
  HaltStore,
  HaltView,
  HaltsUnreadable,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { privateRedis, until, type PrivateRedis } from '@pmm/testkit';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const open: RedisClient[] = [];
const views: HaltView[] = [];

async function connect(at: string): Promise<{ redis: RedisClient; subscriber: RedisClient }> {
  const redis = createRedis(at, { name: 'halt-view-test' });
  const subscriber = createRedis(at, { role: 'subscriber', name: 'halt-view-test-sub' });
  open.push(redis, subscriber);
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
  return { redis, subscriber };
}

afterEach(async () => {
  await Promise.all(views.splice(0).map((v) => v.stop()));
  for (const c of open.splice(0)) c.disconnect();
});

const halt = { scope: { chainId: 8453 }, reason: 'test', by: 'alice', at: 1 };

describe('HaltView', () => {
  it('behavior: a halt made through the store reaches the view by its notice, and its resume too', async () => {
    const keys = redisKeys(`pmm-hv-${randomUUID()}`);
    const { redis, subscriber } = await connect(url);
    // No periodic re-read: only the notice can bring it.
    const view = new HaltView({ redis, subscriber, keys, refreshMs: 3_600_000, maxAgeMs: 3_600_000 });
    views.push(view);
    await view.start();
    expect(view.current()).toEqual([]);
    const store = new HaltStore(redis, keys);
    const durable = DurableWrites.unconfirmed(redis);
    expect(await durable.run(() => store.halt(halt))).toEqual({ made: true });
    await until(() => view.current().length === 1, 2_000, 'the halt seen');
    expect(view.current()).toEqual([halt]);
    await durable.run(() => store.resume({ chainId: 8453 }, { reason: 'ok', by: 'bob', at: 2 }));
    await until(() => view.current().length === 0, 2_000, 'the resume seen');
  });

  it('behavior: a halt whose notice was lost is seen at the next re-read', async () => {
    const keys = redisKeys(`pmm-hv-${randomUUID()}`);
    const { redis, subscriber } = await connect(url);
    const view = new HaltView({ redis, subscriber, keys, refreshMs: 50 });
    views.push(view);
    await view.start();
    // Written without the script: no notice.
    await redis.hset(keys.halts(), 'chain=8453', JSON.stringify(halt));
    await until(() => view.current().length === 1, 2_000, 'the halt seen without a notice');
    await redis.del(keys.halts());
  });

  it('error: a Redis that stops answering makes the view refuse once its last read is maxAgeMs old, and answer again after', async () => {
    let redisServer: PrivateRedis | undefined;
    try {
      redisServer = await privateRedis();
      const keys = redisKeys('pmm');
      const { redis, subscriber } = await connect(redisServer.url);
      let now = 1_000_000;
      const view = new HaltView({ redis, subscriber, keys, refreshMs: 3_600_000, maxAgeMs: 800, now: () => now });
      views.push(view);
      await view.start();
      expect(view.current()).toEqual([]);
      redisServer.pause();
      const stuck = view.refresh();
      now += 799;
      expect(view.current()).toEqual([]);
      now += 1;
      expect(() => view.current()).toThrow(HaltsUnreadable);
      expect(() => view.current()).toThrow('the halts were last read 800 ms ago');
      redisServer.resume();
      await stuck;
      // The read that was stuck started before the clock moved: it is already too old.
      expect(() => view.current()).toThrow(HaltsUnreadable);
      await view.refresh();
      expect(view.current()).toEqual([]);
    } finally {
      // The views and connections first: an UNSUBSCRIBE sent to a Redis killed under it would wait for ever.
      await Promise.all(views.splice(0).map((v) => v.stop()));
      for (const c of open.splice(0)) c.disconnect();
      await redisServer?.stop();
    }
  });

  it('error: before its first read, and while a stored halt does not parse, the view refuses', async () => {
    const keys = redisKeys(`pmm-hv-${randomUUID()}`);
    const { redis, subscriber } = await connect(url);
    let now = 5_000;
    const view = new HaltView({ redis, subscriber, keys, refreshMs: 3_600_000, maxAgeMs: 800, now: () => now });
    views.push(view);
    expect(() => view.current()).toThrow('the halts have not been read yet');
    await view.start();
    await redis.hset(keys.halts(), 'chain=8453', '{"scope":{"chainId":"8453"}}');
    now += 10;
    await view.refresh();
    now += 800;
    // The last good read is the one before the bad record: too old now.
    expect(() => view.current()).toThrow(HaltsUnreadable);
    await redis.del(keys.halts());
  });
});

describe('HaltStore', () => {
  it('behavior: a halt of a halted scope changes nothing and returns the halt in place; a resume of none returns undefined', async () => {
    const keys = redisKeys(`pmm-hs-${randomUUID()}`);
    const { redis } = await connect(url);
    const store = new HaltStore(redis, keys);
    expect(await store.halt(halt)).toEqual({ made: true });
    expect(await store.halt({ ...halt, reason: 'other', by: 'bob', at: 9 })).toEqual({ made: false, existing: halt });
    expect(await store.resume({ chainId: 56 }, { reason: 'x', by: 'bob', at: 10 })).toBeUndefined();
    expect(await store.resume({ chainId: 8453 }, { reason: 'x', by: 'bob', at: 10 })).toEqual(halt);
    expect((await store.history()).events.map((e) => [e.action, e.by, e.at])).toEqual([
      ['halt', 'alice', 1],
      ['resume', 'bob', 10],
    ]);
    await redis.del(keys.halts(), keys.haltLog());
  });
});
