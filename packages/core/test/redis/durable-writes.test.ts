/**
 * core's DurableWrites in replica mode against a real primary with one replica (the shipped
 * replicated settings; testkit's privateReplicatedRedis): writes are spread over the given
 * connections (lanes), each carrying one flight (writes, then one WAIT) at a time, so a WAIT
 * never holds up a write another lane could carry, and writes that found every lane busy share
 * the next WAIT. What the primary counts (INFO commandstats) shows the WAITs actually sent.
 * A write is answered only once WAIT counted the replicas the policy asks for: short, it is
 * refused (DurabilityError), and so is every write that shared that WAIT.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DurabilityError, DurableWrites, createRedis, redisReady, type RedisClient } from '@pmm/core';
import { privateReplicatedRedis, until, type PrivateReplicatedRedis } from '@pmm/testkit';

let nodes: PrivateReplicatedRedis;
const open: RedisClient[] = [];
let admin: RedisClient;
let replica: RedisClient;

beforeAll(async () => {
  // The replica is paused below: the primary must not refuse writes for its lag meanwhile
  // (min-replicas-max-lag is the deployment's 10 s, which a loaded machine could reach).
  nodes = await privateReplicatedRedis({ replicas: 1, args: ['--min-replicas-max-lag', '120'] });
  admin = await connect(nodes.url);
  replica = await connect(nodes.replicas[0]!.url);
}, 60_000);

afterAll(async () => {
  nodes.replicas[0]?.resume();
  for (const c of open) c.disconnect();
  await nodes?.stop();
});

async function connect(url: string): Promise<RedisClient> {
  const client = createRedis(url, { role: 'command', name: 'durable-writes-test' });
  open.push(client);
  await redisReady(client, 15_000);
  return client;
}

/** `count` fail-fast command connections to the primary, as the signer's audit connections are. */
async function lanes(count: number): Promise<RedisClient[]> {
  return Promise.all(Array.from({ length: count }, () => connect(nodes.url)));
}

/** WAITs the primary has run so far (a blocked one counts once it returns). */
async function waitsRun(): Promise<number> {
  const stats = String(await admin.call('INFO', 'commandstats'));
  return Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

/** Connections blocked in a WAIT right now. */
async function waitsBlocked(): Promise<number> {
  const clients = String(await admin.call('CLIENT', 'LIST'));
  return clients.split('\n').filter((c) => / flags=b /.test(c) && / cmd=wait /.test(c)).length;
}

const nextTurn = () => new Promise((r) => setImmediate(r));

describe('DurableWrites in replica mode', () => {
  it('behavior: while a flight is out on one lane, a write goes out on another and is confirmed without waiting for it', async () => {
    const durable = new DurableWrites(await lanes(2), { mode: 'replica', replicas: 1, waitTimeoutMs: 5_000 });
    const key = `dw-${randomUUID()}`;
    // A run whose writes are not done until the test says so holds its lane's flight.
    let release: (() => void) | undefined;
    const held = durable.run((redis) =>
      new Promise<void>((r) => (release = r)).then(() => redis.set(`${key}:held`, 1)),
    );
    const used: RedisClient[] = [];
    const passing = durable.run(async (redis) => {
      used.push(redis);
      return redis.set(`${key}:passing`, 1);
    });
    await expect(passing).resolves.toBe('OK');
    expect(await replica.get(`${key}:passing`)).toBe('1');
    release!();
    await expect(held).resolves.toBe('OK');
    expect(await replica.get(`${key}:held`)).toBe('1');
    expect(used).toHaveLength(1);
  });

  it('behavior: a lane that is down takes no flight while a connected one can carry it later', async () => {
    // A lane whose Redis is gone (nothing listens there), and one connected lane.
    const down = createRedis('redis://127.0.0.1:1', { role: 'command', name: 'durable-writes-down' });
    open.push(down);
    down.on('error', () => undefined);
    const [up] = await lanes(1);
    const durable = new DurableWrites([down, up!], { mode: 'replica', replicas: 1, waitTimeoutMs: 5_000 });
    const key = `dw-${randomUUID()}`;
    const used: RedisClient[] = [];
    // Two at once: the second finds the connected lane flying, and waits for it.
    const both = await Promise.allSettled(
      [0, 1].map((i) =>
        durable.run(async (redis) => {
          used.push(redis);
          return redis.rpush(key, String(i));
        }),
      ),
    );
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(used).toEqual([up, up]);
    expect(await replica.llen(key)).toBe(2);
  });

  it('error: with every lane down, a run fails at once', async () => {
    const down = createRedis('redis://127.0.0.1:1', { role: 'command', name: 'durable-writes-down' });
    open.push(down);
    down.on('error', () => undefined);
    const durable = new DurableWrites([down], { mode: 'replica', replicas: 1, waitTimeoutMs: 5_000 });
    await expect(durable.run((redis) => redis.set(`dw-${randomUUID()}`, 1))).rejects.toThrow();
  });

  it('behavior: writes made while every lane waits for the replica share the next WAIT (group commit); each is on the replica when answered', async () => {
    const durable = new DurableWrites(await lanes(2), { mode: 'replica', replicas: 1, waitTimeoutMs: 20_000 });
    const key = `dw-${randomUUID()}`;
    const before = await waitsRun();
    // The replica stops answering: each lane's first WAIT blocks until it is back.
    nodes.replicas[0]!.pause();
    const answered: number[] = [];
    const runs: Promise<unknown>[] = [];
    try {
      // Forty writes, one per turn of the event loop (as separate sign requests arrive).
      for (let i = 0; i < 40; i++) {
        runs.push(durable.run((redis) => redis.rpush(key, String(i))).then(() => answered.push(i)));
        await nextTurn();
      }
      // Both lanes' WAITs are out, and none answered (the replica acknowledged nothing).
      await until(async () => (await waitsBlocked()) === 2, 10_000, 'both lanes waiting for the replica', 50);
      expect(answered).toEqual([]);
    } finally {
      nodes.replicas[0]!.resume();
    }
    await Promise.all(runs);
    expect(answered).toHaveLength(40);
    // One WAIT per lane for the first two writes, then one for the 38 that waited (the first
    // lane back takes them all): at most one more per lane, whichever lands first.
    expect((await waitsRun()) - before).toBeLessThanOrEqual(4);
    expect((await replica.lrange(key, 0, -1)).map(Number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, i) => i),
    );
  });

  it('behavior: the WAIT goes out right behind the writes of its flight, before their answers (one round trip); each write is on the replica when answered', async () => {
    const [lane] = await lanes(1);
    const sent: string[] = [];
    // One primary: the lane is a single connection.
    const node = lane as Redis;
    const send = node.sendCommand.bind(node);
    node.sendCommand = (command, stream) => {
      sent.push(`sent ${command.name.toLowerCase()}`);
      return send(command, stream);
    };
    const durable = new DurableWrites([lane!], { mode: 'replica', replicas: 1, waitTimeoutMs: 5_000 });
    const key = `dw-${randomUUID()}`;
    await durable.run((redis) => redis.set(key, 'a').then((v) => (sent.push('answered set'), v)));
    expect(sent).toEqual(['sent set', 'sent wait', 'answered set']);
    expect(await replica.get(key)).toBe('a');
  });

  it('behavior: a write its flight sends after the WAIT went out (a script re-sent after NOSCRIPT, a write after an await) gets a WAIT of its own', async () => {
    const [lane] = await lanes(1);
    const durable = new DurableWrites([lane!], { mode: 'replica', replicas: 1, waitTimeoutMs: 20_000 });
    const key = `dw-${randomUUID()}`;
    const before = await waitsRun();
    let answered = false;
    const run = durable
      .run(async (redis) => {
        await redis.set(`${key}:first`, 1);
        // The replica stops answering before the second write: only a second WAIT can cover it.
        nodes.replicas[0]!.pause();
        return redis.set(`${key}:second`, 2);
      })
      .then(() => (answered = true));
    try {
      await until(async () => (await waitsBlocked()) === 1, 10_000, 'a WAIT for the second write', 50);
      expect(answered).toBe(false);
    } finally {
      nodes.replicas[0]!.resume();
    }
    await run;
    expect((await waitsRun()) - before).toBe(2);
    expect(await replica.get(`${key}:second`)).toBe('2');
  });

  it('error: fewer replica acknowledgements than required refuse the write and every write that shared its WAIT; none is answered', async () => {
    // Two replicas asked of a primary that has one: WAIT returns 1 at its timeout.
    const durable = new DurableWrites(await lanes(1), { mode: 'replica', replicas: 2, waitTimeoutMs: 200 });
    const key = `dw-${randomUUID()}`;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => durable.run((redis) => redis.rpush(key, String(i)))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(Array(10).fill('rejected'));
    for (const o of outcomes) {
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(DurabilityError);
      expect(String((o as PromiseRejectedResult).reason)).toContain('1 of 2 replica acknowledgements within 200 ms');
    }
  });

  it('error: a replica that does not answer within the WAIT timeout refuses the writes; once it is back, writes are confirmed again', async () => {
    const durable = new DurableWrites(await lanes(2), { mode: 'replica', replicas: 1, waitTimeoutMs: 300 });
    const key = `dw-${randomUUID()}`;
    nodes.replicas[0]!.pause();
    let outcomes: PromiseSettledResult<unknown>[];
    try {
      outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => durable.run((redis) => redis.rpush(key, String(i)))),
      );
    } finally {
      nodes.replicas[0]!.resume();
    }
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toContain('0 of 1 replica acknowledgements');
    // The replica catches up; the next write is confirmed (and so are the earlier ones with it).
    await until(
      () =>
        durable
          .run((redis) => redis.rpush(key, 'later'))
          .then(
            () => true,
            () => false,
          ),
      15_000,
      'a write confirmed after the replica is back',
      100,
    );
    expect(await replica.lrange(key, -1, -1)).toEqual(['later']);
  });

  it('error: a run whose writes fail is refused alone; the runs that flew with it are confirmed', async () => {
    const [lane] = await lanes(1);
    const durable = new DurableWrites([lane!], { mode: 'replica', replicas: 1, waitTimeoutMs: 5_000 });
    const key = `dw-${randomUUID()}`;
    await lane!.set(`${key}:string`, 'x');
    // The lane is held by a first flight, so the next three wait and fly together.
    let release: (() => void) | undefined;
    const first = durable.run(() => new Promise<void>((r) => (release = r)));
    const good = durable.run((redis) => redis.set(`${key}:a`, 1));
    const bad = durable.run((redis) => redis.rpush(`${key}:string`, 'wrong type'));
    const thrown = durable.run(() => {
      throw new Error('no write at all');
    });
    await until(() => release, 5_000, 'the first flight out');
    release!();
    await first;
    await expect(good).resolves.toBe('OK');
    await expect(bad).rejects.toThrow(/WRONGTYPE/);
    await expect(thrown).rejects.toThrow('no write at all');
    expect(await replica.get(`${key}:a`)).toBe('1');
  });
});
