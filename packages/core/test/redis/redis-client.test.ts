import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { closeRedis, createRedis, redisReady } from '@pmm/core';
import { privateRedis } from '@pmm/testkit';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('createRedis', () => {
  it('default: a command client talks to the real Redis', async () => {
    const r = createRedis(url, { name: 'test' });
    await redisReady(r);
    const key = `test:${randomUUID()}`;
    await r.set(key, 'v', 'EX', 10);
    expect(await r.get(key)).toBe('v');
    await r.del(key);
    r.disconnect();
  });

  it('error: a command client fails fast (no hang) when Redis is unreachable', async () => {
    const r = createRedis('redis://127.0.0.1:1', { name: 'test' });
    const started = Date.now();
    await expect(r.get('x')).rejects.toThrow();
    await expect(redisReady(r, 300)).rejects.toThrow('redis not ready after 300 ms');
    expect(Date.now() - started).toBeLessThan(3_000);
    r.disconnect();
    // disconnect() of a client between reconnection attempts arms ioredis' disconnectTimeout
    // (2 s by default) for the socket that has already closed, and nothing clears it: it would
    // keep the jest worker alive after the run ("failed to exit gracefully"). Wait it out.
    const { disconnectTimeout } = (r as Redis).options;
    await new Promise((resolve) => setTimeout(resolve, (disconnectTimeout ?? 2_000) + 100));
  });
});

describe('closeRedis', () => {
  it('error: a Redis that stops answering (SIGSTOP) does not hold the close: QUIT is given up after the wait', async () => {
    const server = await privateRedis();
    try {
      // A worker connection has no command timeout (a command client's 2 s would bound QUIT too).
      const client = createRedis(server.url, { name: 'close-stalled', role: 'worker' });
      await redisReady(client);
      server.pause();
      const started = Date.now();
      await closeRedis(client, { waitMs: 300 });
      // Without the wait, quit() never settles and this test times out.
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await server.stop();
    }
  }, 10_000);

  it('behavior: by default the close waits for a Redis that stalls a moment: what was sent before QUIT is answered', async () => {
    const server = await privateRedis();
    try {
      const client = createRedis(server.url, { name: 'close-slow', role: 'worker' });
      await redisReady(client);
      server.pause();
      const order: string[] = [];
      // Sent, not awaited: a stream's slot release, say.
      const sent = client.set(`pmm-test:close-${randomUUID()}`, 'x').then(() => void order.push('answered'));
      const closing = closeRedis(client).then(() => void order.push('closed'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      server.resume();
      await Promise.all([sent, closing]);
      expect(order).toEqual(['answered', 'closed']);
    } finally {
      await server.stop();
    }
  }, 10_000);
});
