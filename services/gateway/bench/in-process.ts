/**
 * For the record, not shipped: the sign path with the signer's use case IN the gateway's
 * process, no hop. One node:http server runs the gateway's steps (API key, rate limit, body
 * limit) and then the signer's (integrator, JSON body, sign use case with its audit record),
 * on the same Redis layout. gateway.bench.ts measures it beside the deployed pair, to put a
 * number on what the separate signer costs (docs/decisions/0015-the-signer-is-its-own-process.md).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import {
  andThen,
  DAY_MS,
  DurableWrites,
  createDigestSigner,
  createLogger,
  createMetrics,
  createRedis,
  redisKeys,
  redisReady,
  readLimitedBody,
  sendError,
  type MaybePromise,
} from '@pmm/core';
import {
  createSignUseCase,
  IntegratorStore,
  PairRegistryCache,
  parseJsonBody,
  RedisAuditTrail,
  signMetrics,
} from '@pmm/signer';
import { ApiKeyStore, type ResolvedApiKey } from '../src/keys/api-key-store';
import { ApiKeyCache } from '../src/keys/api-key-cache';
import { RateLimiter } from '../src/keys/rate-limiter';
import { authenticate } from '../src/keys/api-key-step';
import { enforceRateLimit } from '../src/keys/rate-limit-step';
import { NO_REFERENCES } from '@pmm/signer';

export async function startInProcessSign(opts: { redisUrl: string; prefix: string }): Promise<number> {
  const logger = createLogger({ service: 'in-process', level: 'warn', silent: true });
  const keys = redisKeys(opts.prefix);
  const redis = createRedis(opts.redisUrl, { role: 'command', name: 'in-process' });
  const subscriber = createRedis(opts.redisUrl, { role: 'subscriber', name: 'in-process-sub' });
  const auditRedis = createRedis(opts.redisUrl, { role: 'command', name: 'in-process-audit' });
  await redisReady(redis);
  const keyCache = new ApiKeyCache({ store: new ApiKeyStore(redis, opts.prefix), ttlMs: 500, subscriber, keys });
  await keyCache.start();
  const limiter = new RateLimiter(redis, opts.prefix);
  const pairs = new PairRegistryCache({ redis, subscriber, keys, chains: [8453], logger });
  await pairs.start();
  const integrators = new IntegratorStore({ redis, keys, subscriber });
  await integrators.start();
  const sign = createSignUseCase({
    servedChains: [8453],
    maxFee: 10_000n,
    signers: new Map([[8453, createDigestSigner(`0x${randomBytes(32).toString('hex')}`)]]),
    originRates: new Map(),
    quoteValiditySeconds: new Map([[8453, 60]]),
    pairs,
    // No halt: the check is a scan of the active halts, none here.
    references: NO_REFERENCES,
    halts: { current: () => [] },
    audit: new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(auditRedis),
    }),
    // No node here: the firm amount answers at once (the gateway bench's firm-quote row has the node's round trip).
    firmQuotes: (req) => Promise.resolve({ grossOut: req.amountIn, blockNumber: 1 }),
    metrics: signMetrics(createMetrics('in-process')),
    logSigned: false,
  });
  const rate = { limiter, defaults: { requests: 600, windowSeconds: 60 } };
  const server = createServer((req, res) => {
    const answer = (auth: ResolvedApiKey) =>
      readLimitedBody(req, res, 16 * 1024, (body) => {
        const signed = andThen(integrators.get(auth.integrator.id), (integrator) =>
          sign({
            body: parseJsonBody(body),
            integrator: integrator!,
            legacy: false,
            keyId: auth.key.keyId,
            requestId: 'in-process',
            log: () => undefined,
          }),
        );
        Promise.resolve(signed).then(
          (json) => {
            res.writeHead(200, {
              'Content-Type': 'application/json; charset=utf-8',
              'Content-Length': Buffer.byteLength(json),
            });
            res.end(json);
          },
          (err: unknown) => sendError(res, err),
        );
      });
    let ready: MaybePromise<ResolvedApiKey>;
    try {
      ready = andThen(authenticate(keyCache, req.headers), (auth) =>
        andThen(enforceRateLimit(rate, auth.integrator, res), () => auth),
      );
    } catch (err) {
      return sendError(res, err);
    }
    if (ready instanceof Promise) ready.then(answer, (err: unknown) => sendError(res, err));
    else answer(ready);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}
