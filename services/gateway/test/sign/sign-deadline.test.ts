/**
 * The sign's deadline at the gateway (sign/sign-admission.ts; docs/decisions/0071-past-capacity-a-fast-no.md):
 * it starts when the request is read, before the key, and whatever step is under way when it
 * falls due, the client is answered 503 SERVICE_UNAVAILABLE with Retry-After then, counted by
 * that step. Here the step is the key's lookup, on a private Redis that stops answering.
 */
import request from 'supertest';
import { redisReady } from '@pmm/core';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { call, harness, type Harness } from '../support/harness';
import { SIGN_REQUEST_BODY as BODY, fakeSigner, type FakeSigner } from '../support/fake-signer';

let redis: PrivateRedis;
let h: Harness;
let signer: FakeSigner;

beforeAll(async () => {
  redis = await privateRedis();
  h = await harness(redis.url);
  signer = await fakeSigner();
});
afterAll(async () => {
  try {
    redis.resume();
    await redisReady(h.redis, 10_000).catch(() => undefined);
    await h.cleanup();
  } finally {
    await redis.stop();
    await signer.close();
  }
});

it("error: a key lookup that does not end by the sign's deadline is 503 at the deadline, counted as key", async () => {
  // A deadline of a second: the event loop's delay is taken from it first (`queue`), and this
  // process's loop, shared with the client, was once 380 ms late at a load of four jest workers.
  const gw = await h.gateway({ signerUrl: signer.url, signDeadlineMs: 1_000 });
  const key = await h.apiKey({ id: 'stalled' });
  redis.pause();
  const started = Date.now();
  const res = await call(
    request(gw.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
  );
  const ms = Date.now() - started;
  redis.resume();
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body.error).toEqual({
    code: 'SERVICE_UNAVAILABLE',
    message: 'this sign could not be answered within its deadline; retry shortly',
    requestId: res.headers['x-request-id'],
  });
  // At the deadline (earlier by the loop's delay on a busy machine, counted as spent).
  expect(ms).toBeGreaterThanOrEqual(500);
  expect(ms).toBeLessThan(2_000);
  expect(signer.requests).toHaveLength(0);
  const metrics = (await request(gw.opsApp).get('/metrics')).text;
  expect(metrics).toMatch(/^gateway_deadline_refusals_total\{reason="key"[^}]*\} 1$/m);
  // Redis back: the same key signs (the late lookup did not leave a broken request behind).
  await redisReady(h.redis, 10_000);
  expect((await call(request(gw.app).post('/v2/swap/sign').set('X-API-KEY', key).send(BODY))).status).toBe(200);
});
