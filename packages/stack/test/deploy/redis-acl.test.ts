/**
 * One Redis user per role (packages/core/src/redis/redis-acl.ts), on a real redis-server: each role's
 * own code works under its user (the gateway's key lookups, rate limit, stream-free and fills reads;
 * the signer's audit script; an indexer's book script and BullMQ queue; the key CLI's writes and
 * export; the operator's audit reads; the durability checks, by INFO), and every user is refused
 * (NOPERM) what lies outside its role: the server's configuration (its passwords), SCRIPT and
 * FUNCTION among it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  HaltStore,
  LedgerReads,
  aclUserLine,
  bookBandKey,
  bookBandLogKey,
  chainFates,
  readAuditPage,
  haltScopeName,
  DurableWrites,
  createLogger,
  createRedis,
  redisKeys,
  redisReady,
  redisRoleRule,
  type RedisClient,
  type RedisUserRole,
} from '@pmm/core';
import { ApiKeyStore, RateLimiter, StreamSlots, hashApiKey, seedDevKey } from '@pmm/gateway';
import {
  createBookStore,
  createLedgerMetrics,
  createLedgerStore,
  ledgerStoreKeys,
  RollingMarkouts,
} from '@pmm/indexer';
import { RedisAuditTrail } from '@pmm/signer';
import {
  commandOutcome,
  privateRedis,
  sampleAuditRecord,
  sampleLedgerEntry,
  sampleLedgerRevert,
  type PrivateRedis,
} from '@pmm/testkit';
import { createBlockQueue, createBlockWorker } from '../../../../services/indexer/src/jobs/block-queue';
import { DeadlineFates } from '../../../../services/indexer/src/ledger/deadline-fates';
import { AuditReader } from '../../../operator/src/audit-trail/audit-reader';
import { readConsoleLedger } from '../../../../services/gateway/src/console/console-ledger';

const PREFIX = 'pmm';
const keys = redisKeys(PREFIX);
const ADMIN_PASSWORD = 'admin-password-for-the-test';
const users: { user: string; role: RedisUserRole; opts: { chainId?: number; devKey?: boolean } }[] = [
  { user: 'gateway', role: 'gateway', opts: {} },
  { user: 'gateway-dev', role: 'gateway', opts: { devKey: true } },
  { user: 'signer', role: 'signer', opts: {} },
  { user: 'indexer-8453', role: 'indexer', opts: { chainId: 8453 } },
  { user: 'ledger-8453', role: 'ledger', opts: { chainId: 8453 } },
  { user: 'keys', role: 'keys', opts: {} },
  { user: 'operator', role: 'operator', opts: {} },
  { user: 'risk', role: 'risk', opts: {} },
];
const passwordOf = (user: string) => `${user}-password-0123456789`;

/** One of acme's swaps on 8453, a ledger entry as the ledger writes it. */
const ledgerEntry = (block: number, blockTime: number) => sampleLedgerEntry(block, blockTime);

let server: PrivateRedis;
const clients: RedisClient[] = [];
let admin: RedisClient;

async function connect(user: string): Promise<RedisClient> {
  const url = server.url.replace('redis://', `redis://${user}:${passwordOf(user)}@`);
  const client = createRedis(url, { name: `acl-${user}` });
  clients.push(client);
  await redisReady(client);
  return client;
}

beforeAll(async () => {
  // The user lines go into a config file in production; on the command line they are the same directives.
  // Every write fsynced, as shipped: each user must be able to confirm it (INFO persistence). The
  // default user's password (`requirepass`), as a Redis administered that way has it: no role may read it.
  const args = ['--requirepass', ADMIN_PASSWORD, '--appendonly', 'yes', '--appendfsync', 'always'];
  for (const { user, role, opts } of users)
    args.push(
      ...[
        '--user',
        ...aclUserLine(user, passwordOf(user), redisRoleRule(role, { prefix: PREFIX, ...opts }))
          .split(' ')
          .slice(1),
      ],
    );
  server = await privateRedis({ args, dir: mkdtempSync(path.join(tmpdir(), 'pmm-acl-redis-')) });
  admin = createRedis(server.url.replace('redis://', `redis://:${ADMIN_PASSWORD}@`), { name: 'acl-admin' });
  clients.push(admin);
  await redisReady(admin);
}, 30_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

describe('Redis users, one per role', () => {
  it('behavior: every user may run the durability checks (INFO, the fsync check of durable writes) and PING', async () => {
    for (const { user } of users) {
      const redis = await connect(user);
      expect([user, await redis.ping()]).toEqual([user, 'PONG']);
      expect([user, await redis.info('persistence')]).toEqual([user, expect.stringContaining('aof_enabled:1')]);
      const durable = new DurableWrites(redis, { mode: 'fsync', replicas: 1, waitTimeoutMs: 500 });
      await expect(durable.begin()).resolves.toBeDefined();
    }
  });

  it("security: no user reads the server's configuration (its passwords) or changes another's scripts or functions", async () => {
    const library = "#!lua name=pmmacl\nredis.register_function('f', function() return 1 end)";
    const refused = [
      ['CONFIG', 'GET', 'requirepass'],
      ['CONFIG', 'GET', 'masterauth'],
      ['CONFIG', 'GET', '*'],
      ['SCRIPT', 'FLUSH'],
      ['SCRIPT', 'KILL'],
      ['FUNCTION', 'FLUSH'],
      ['FUNCTION', 'LOAD', library],
      ['FUNCTION', 'DELETE', 'pmmacl'],
      ['FUNCTION', 'RESTORE', 'x'],
      ['FUNCTION', 'KILL'],
    ];
    for (const { user } of users) {
      const redis = await connect(user);
      for (const command of refused)
        expect([
          user,
          command.join(' '),
          await commandOutcome(() => redis.call(command[0]!, ...command.slice(1))),
        ]).toEqual([user, command.join(' '), 'NOPERM']);
    }
    // What the refusal protects: the administrator's password is in the configuration.
    expect(await admin.call('CONFIG', 'GET', 'requirepass')).toEqual(['requirepass', ADMIN_PASSWORD]);
  });

  it('security: the gateway reads keys and integrators, counts its rate limit; it cannot write a key, an integrator or the audit trail', async () => {
    const store = new ApiKeyStore(await connect('keys'), PREFIX);
    await store.putIntegrator({
      id: 'acme',
      name: 'Acme',
      whitelist: [],
      chains: [],
      rateLimit: { requests: 10, windowSeconds: 60 },
      disabled: false,
    });
    const { apiKey } = await store.issueKey('acme');
    const gateway = await connect('gateway');
    const asGateway = new ApiKeyStore(gateway, PREFIX);
    expect((await asGateway.lookupHash(hashApiKey(apiKey)))?.integrator.id).toBe('acme');
    const limiter = new RateLimiter(gateway, PREFIX);
    expect((await limiter.consume('acme', 10, 60)).allowed).toBe(true);
    // A price stream's slot: the scripts read the server's clock (TIME).
    const slots = new StreamSlots(gateway, PREFIX, 15_000);
    const lease = await slots.acquire('acme-key', 1);
    expect(lease).toBeTruthy();
    lease!.release();
    slots.stop();
    expect(await gateway.get(keys.book(8453))).toBeNull();
    expect(await commandOutcome(() => gateway.xinfo('STREAM', keys.audit(8453)))).toMatch(/^(ok|ERR)$/);
    expect(await commandOutcome(() => gateway.set(keys.apiKey('f'.repeat(64)), '{}'))).toBe('NOPERM');
    expect(
      await commandOutcome(() =>
        asGateway.putIntegrator({
          id: 'evil',
          name: 'x',
          whitelist: [],
          chains: [],
          rateLimit: { requests: 0, windowSeconds: 0 },
          disabled: false,
        }),
      ),
    ).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.del(keys.audit(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.set(keys.book(8453), '{}'))).toBe('NOPERM');
    // Channels have no read/write split in Redis: a subscriber may also publish there (a spurious
    // notice only makes caches read again). It may not publish anywhere else.
    expect(await commandOutcome(() => gateway.publish(`${PREFIX}:other`, 'x'))).toBe('NOPERM');
    for (const dangerous of [['FLUSHALL'], ['KEYS', '*'], ['CONFIG', 'SET', 'appendonly', 'no'], ['ACL', 'LIST']])
      expect([dangerous[0], await commandOutcome(() => gateway.call(dangerous[0]!, ...dangerous.slice(1)))]).toEqual([
        dangerous[0],
        'NOPERM',
      ]);
  });

  it('security: only a gateway set up for the development key may seed it, and then only it', async () => {
    const plain = new ApiKeyStore(await connect('gateway'), PREFIX);
    expect(await commandOutcome(() => seedDevKey(plain, 'pmm_dev_key_for_the_acl_test_0123', []))).toBe('NOPERM');
    const dev = new ApiKeyStore(await connect('gateway-dev'), PREFIX);
    expect(await seedDevKey(dev, 'pmm_dev_key_for_the_acl_test_0123', [])).toBe('seeded');
    expect(
      await commandOutcome(() =>
        dev.putIntegrator({
          id: 'other',
          name: 'x',
          whitelist: [],
          chains: [],
          rateLimit: { requests: 0, windowSeconds: 0 },
          disabled: false,
        }),
      ),
    ).toBe('NOPERM');
  });

  it('security: the signer appends to the audit trail and reads integrators; it cannot write keys, integrators or books', async () => {
    const signer = await connect('signer');
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: 86_400_000,
      durability: new DurableWrites(signer, { mode: 'fsync', replicas: 1, waitTimeoutMs: 500 }),
    });
    await trail.record(sampleAuditRecord(1, { integratorId: 'acme' }));
    expect(await admin.xlen(keys.audit(8453))).toBe(1);
    expect(await signer.get(keys.integrator('acme'))).not.toBeNull();
    expect(await signer.wait(0, 0)).toBe(0);
    expect(await commandOutcome(() => signer.set(keys.integrator('acme'), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => signer.set(keys.apiKey('e'.repeat(64)), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => signer.set(keys.book(8453), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => signer.get(keys.apiKey('e'.repeat(64))))).toBe('NOPERM');
  });

  it("security: an indexer writes its own chain's book and queue; it cannot touch another chain, keys, integrators or the audit trail", async () => {
    const indexer = await connect('indexer-8453');
    const books = createBookStore(indexer, {
      keys: { book: keys.book(8453), updates: keys.updates(8453) },
      chainId: 8453,
      ttlMs: 10_000,
    });
    expect(await books.write(5, '{"blockNumber":5}')).toBe(true);
    // With its pairs' standing and their transitions in and out of band (the book's script).
    expect(await books.write(6, '{"blockNumber":6}', { band: '{}', transitions: ['{}'] })).toBe(true);
    expect(await indexer.xlen(bookBandLogKey(keys.book(8453)))).toBe(1);
    // The pair registry is written in a MULTI/EXEC transaction.
    expect(await indexer.multi().set(keys.pairs(8453), '{}').publish(keys.updates(8453), 'x').exec()).toEqual([
      [null, 'OK'],
      [null, 0],
    ]);
    const logger = createLogger({ service: 'acl-test', silent: true });
    const worker = await connect('indexer-8453');
    const seen: number[] = [];
    const queue = createBlockQueue({ connection: indexer, prefix: keys.queuePrefix(8453), logger });
    // Closed in afterAll with the others: bullmq does not close a connection it was given, and
    // one left open retries the stopped server for ever, which kept jest's worker from exiting.
    const workerConnection = createRedis(
      server.url.replace('redis://', `redis://indexer-8453:${passwordOf('indexer-8453')}@`),
      { name: 'acl-worker', role: 'worker' },
    );
    clients.push(workerConnection);
    const blocks = createBlockWorker({
      connection: workerConnection,
      prefix: keys.queuePrefix(8453),
      lockMs: 5_000,
      logger,
      process: async (data) => {
        seen.push(data.number);
        return { outcome: 'written' } as never;
      },
    });
    blocks.resume();
    await queue.announce({ number: 7, timestamp: 1, hash: `0x${'a'.repeat(64)}`, seenAt: Date.now() } as never);
    for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([7]);
    await blocks.close();
    await queue.close();
    expect(await commandOutcome(() => worker.set(keys.book(56), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => worker.set(keys.apiKey('d'.repeat(64)), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => worker.set(keys.integrator('evil'), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => worker.xadd(keys.audit(8453), '*', 'r', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => worker.del(keys.audit(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => worker.publish(keys.accessUpdated(), 'x'))).toBe('NOPERM');
  }, 30_000);

  it('security: the key CLI writes integrator data; it cannot touch the audit trail or books', async () => {
    const cli = await connect('keys');
    const store = new ApiKeyStore(cli, PREFIX);
    await store.putIntegrator({
      id: 'beta',
      name: 'Beta',
      whitelist: [],
      chains: [],
      rateLimit: { requests: 0, windowSeconds: 0 },
      disabled: false,
    });
    const { record } = await store.issueKey('beta');
    await store.revokeKey(record.keyId);
    expect((await cli.scan('0', 'MATCH', `${PREFIX}:integrator:*`, 'COUNT', 100))[0]).toBeDefined();
    expect(await commandOutcome(() => cli.del(keys.audit(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => cli.xrange(keys.audit(8453), '-', '+'))).toBe('NOPERM');
    expect(await commandOutcome(() => cli.set(keys.book(8453), '{}'))).toBe('NOPERM');
  });

  it("security: a ledger writes its own chain's ledger and reads its audit trail and mids; nothing else, no other chain; the gateway reads its totals only", async () => {
    const ledger = await connect('ledger-8453');
    const reader = new AuditReader(ledger, keys);
    const record = sampleAuditRecord(1, { integratorId: 'acme' });
    expect((await reader.bySignature(8453, record.signature, record.timestamp)).length).toBe(1);
    // Its signatures judged at their deadline: the trail read as it grows.
    const judging = new DeadlineFates(ledger, keys.audit(8453), 900);
    judging.start(0, -Infinity, [], []);
    await expect(judging.judge(1, Math.floor(Date.now() / 1_000))).resolves.toEqual(expect.any(Array));
    // Its store's commit and rollback (swaps, day totals with the firm signatures judged, block
    // hashes, cursor) and its rolling markouts.
    const store = createLedgerStore(ledger, ledgerStoreKeys(keys, 8453), 256);
    const now = Math.floor(Date.now() / 1_000);
    await store.commit(
      { number: 1, hash: `0x${'1'.repeat(64)}`, time: now },
      [ledgerEntry(1, now)],
      [],
      [{ integratorId: 'acme', firm: true, fate: 'executed', blockTime: now }],
    );
    await store.commit(
      { number: 2, hash: `0x${'2'.repeat(64)}`, time: now },
      [ledgerEntry(2, now)],
      [sampleLedgerRevert(2, now)],
    );
    expect(await store.rollback({ number: 1, hash: `0x${'1'.repeat(64)}` })).toEqual({ swaps: 1, reverts: 1 });
    const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
    const logger = createLogger({ service: 'acl-test', silent: true });
    const rolling = new RollingMarkouts(ledger, keys.ledgerMarkouts(8453), metrics, logger);
    await rolling.load();
    await rolling.add([{ integratorId: 'acme', bps: -4, referenceBps: -30 }]);
    expect(await ledger.zrange(keys.mids(8453), 0, -1)).toEqual([]);
    expect(await commandOutcome(() => ledger.zadd(keys.mids(8453), 1, 'x'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.xadd(keys.audit(8453), '*', 'r', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.zadd(keys.ledger(56), 1, '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.set(keys.book(8453), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.get(keys.integrator('acme')))).toBe('NOPERM');

    // The gateway's console reads the ledger's cursor, day totals and rolling markouts; its
    // `/v2/fills` the swaps and reverted calls; it writes none, and reads no block hash.
    const gateway = await connect('gateway');
    expect(await readConsoleLedger(gateway, keys, 8453, now * 1_000)).toEqual({
      day: expect.any(String),
      block: 1,
      integrators: [
        {
          integratorId: 'acme',
          swaps: 1,
          reverts: 0,
          notional: 3000,
          firm: 1,
          firmExecuted: 1,
          firmUnused: 0,
          fillRate: 1,
          unusedShare: 0,
          markout60sBps: -4,
          markoutSwaps: 1,
          referenceMarkout60sBps: -30,
          referenceMarkoutSwaps: 1,
        },
      ],
    });
    await store.commit({ number: 2, hash: `0x${'2'.repeat(64)}`, time: now }, [], [sampleLedgerRevert(2, now)]);
    const fills = await chainFates(new LedgerReads(gateway, keys), 8453, [
      { ...record, requestId: 'req-1', timestamp: now, deadline: now + 60 },
      { ...record, requestId: sampleLedgerRevert(2, now).requestId, timestamp: now, deadline: now + 60 },
    ]);
    expect(fills.fates.map((f) => f.executions + f.reverts)).toEqual([1, 1]);
    const page = await readAuditPage(gateway, keys, { chainId: 8453, integratorId: 'acme', maxScan: 100 });
    expect(page.entries.map((e) => e.record.signature)).toContain(record.signature);
    expect(await commandOutcome(() => gateway.zadd(keys.ledger(8453), 1, '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.zadd(keys.ledgerReverts(8453), 1, '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.hgetall(keys.ledgerBlocks(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.hget(keys.auditSignatures(8453, 1), 'x'))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.zrange(keys.mids(8453), 0, -1))).toBe('NOPERM');
    const today = keys.ledgerDay(8453, Math.floor(now / 86_400));
    expect(await commandOutcome(() => gateway.hincrby(today, 'swaps:acme', 1))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.hset(keys.ledgerMarkouts(8453), 'acme', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => gateway.set(keys.ledgerCursor(8453), '{}'))).toBe('NOPERM');
  });

  it("security: a ledger whose limit trips adds a trip to its own chain's trips, durably; it can never write over one, lift a halt, touch the operator's halts, another ledger's trips or the log", async () => {
    const ledger = await connect('ledger-8453');
    const store = new HaltStore(ledger, keys);
    const durability = new DurableWrites(ledger, { mode: 'fsync', replicas: 1, waitTimeoutMs: 500 });
    const trip = {
      scope: { integratorId: 'acme' },
      reason: 'limit integrator-notional: …',
      by: 'ledger-8453',
      at: 2,
      trip: { limit: 'integrator-notional', value: '3200', threshold: '3000' },
    };
    expect(await durability.run(() => store.trip(8453, trip))).toEqual({ made: true });
    expect(await store.trip(8453, { ...trip, reason: 'again' })).toEqual({ made: false, existing: trip });
    expect((await store.active()).map((h) => h.trip)).toContainEqual(trip.trip);
    // The mid history's times, for a markout at a time horizon; the halts, the trips and the log, read.
    expect(await commandOutcome(() => ledger.zrange(keys.midTimes(8453), 0, 0))).toBe('ok');
    expect(await commandOutcome(() => store.history())).toBe('ok');
    // Its own trip: no write over it, no removal.
    const name = 'integrator=acme';
    expect(await commandOutcome(() => ledger.hset(keys.haltTrips(8453), name, '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.hdel(keys.haltTrips(8453), name))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.del(keys.haltTrips(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.expire(keys.haltTrips(8453), 1))).toBe('NOPERM');
    // Another ledger's trips, the operator's halts, the log: nothing.
    expect(await commandOutcome(() => ledger.hsetnx(keys.haltTrips(56), name, '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.hsetnx(keys.halts(), 'chain=56', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.hset(keys.halts(), 'chain=56', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.hdel(keys.halts(), 'chain=56'))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.xadd(keys.haltLog(), 'MAXLEN', '0', '*', 'event', '{}'))).toBe('NOPERM');
    const forgedResume = JSON.stringify({
      action: 'resume',
      scope: { integratorId: 'acme' },
      reason: 'x',
      by: 'x',
      at: 9e12,
    });
    expect(await commandOutcome(() => ledger.xadd(keys.haltLog(), '*', 'event', forgedResume))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.xtrim(keys.haltLog(), 'MAXLEN', 0))).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.xdel(keys.haltLog(), '0-1'))).toBe('NOPERM');
    expect(
      await commandOutcome(() => store.resume({ integratorId: 'acme' }, { reason: 'x', by: 'ledger', at: 3 })),
    ).toBe('NOPERM');
    expect(await commandOutcome(() => ledger.publish(keys.accessUpdated(), 'x'))).toBe('NOPERM');
    // A script of its own runs only what its user may: no HSET on its trips by EVAL either.
    expect(
      await commandOutcome(() => ledger.eval("return redis.call('HSET', KEYS[1], 'x', 'y')", 1, keys.haltTrips(8453))),
    ).toBe('NOPERM');
    expect(await admin.hget(keys.haltTrips(8453), name)).toBe(JSON.stringify(trip));
    // What it may add counts only as the trips it may make: a trip of another chain filed by it
    // halts its own chain instead (fail closed in its own domain), and never throws.
    const wider = { ...trip, scope: { chainId: 56 } };
    expect(await store.trip(8453, wider)).toEqual({ made: true });
    const { halts, unreadableTrips } = await store.read();
    expect(unreadableTrips).toEqual([{ chainId: 8453, field: 'chain=56' }]);
    expect(halts.map((h) => [haltScopeName(h.scope), h.by])).toEqual(
      expect.arrayContaining([
        ['chain=8453', 'ledger-8453'],
        [name, 'ledger-8453'],
      ]),
    );
    expect(halts.some((h) => haltScopeName(h.scope) === 'chain=56')).toBe(false);
    // Only the risk user lifts them: the trip goes to the log, the unreadable field with its chain's resume.
    const risk = new HaltStore(await connect('risk'), keys);
    expect(await risk.resume({ integratorId: 'acme' }, { reason: 'reviewed', by: 'test', at: 4 })).toMatchObject({
      trip: trip.trip,
    });
    expect(await risk.resume({ chainId: 8453 }, { reason: 'cleared', by: 'test', at: 5 })).toMatchObject({
      scope: { chainId: 8453 },
    });
    expect(await admin.exists(keys.haltTrips(8453))).toBe(0);
    expect((await risk.history()).events.map((e) => [e.action, e.by])).toEqual([
      ['halt', 'ledger-8453'],
      ['resume', 'test'],
      ['resume', 'test'],
    ]);
    await admin.del(keys.haltLog());
  });

  it('security: the operator commands read the audit trail only', async () => {
    const operator = await connect('operator');
    const reader = new AuditReader(operator, keys);
    const record = sampleAuditRecord(1, { integratorId: 'acme' });
    expect((await reader.bySignature(8453, record.signature, record.timestamp)).length).toBe(1);
    expect(await commandOutcome(() => operator.xadd(keys.audit(8453), '*', 'r', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => operator.del(keys.audit(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => operator.get(keys.integrator('acme')))).toBe('NOPERM');
    expect(await commandOutcome(() => operator.set(keys.integrator('acme'), '{}'))).toBe('NOPERM');
    // `markouts`: the ledger and the mids, read only.
    expect(await operator.zrange(keys.ledger(8453), 0, -1)).toEqual(expect.any(Array));
    expect(await operator.zrange(keys.mids(8453), 0, -1)).toEqual(expect.any(Array));
    expect(await commandOutcome(() => operator.zadd(keys.ledger(8453), 1, 'x'))).toBe('NOPERM');
  });

  it('security: the risk command writes the halts and reads what it checks; the services read the halts only', async () => {
    const risk = await connect('risk');
    const store = new HaltStore(risk, keys);
    const halt = { scope: { chainId: 8453 }, reason: 'acl', by: 'test', at: 1 };
    expect(await store.halt(halt)).toEqual({ made: true });
    expect((await store.history()).events).toHaveLength(1);
    expect(await commandOutcome(() => risk.get(keys.integrator('acme')))).toBe('ok');
    expect(await commandOutcome(() => risk.get(keys.pairs(8453)))).toBe('ok');
    expect(await commandOutcome(() => risk.xrange(keys.audit(8453), '-', '+'))).toBe('ok');
    // Each pair's standing (status) and its transitions in and out of band (history), read only.
    expect(await commandOutcome(() => risk.get(bookBandKey(keys.book(8453))))).toBe('ok');
    expect(await commandOutcome(() => risk.xrange(bookBandLogKey(keys.book(8453)), '-', '+'))).toBe('ok');
    expect(await commandOutcome(() => risk.xadd(bookBandLogKey(keys.book(8453)), '*', 'transition', '{}'))).toBe(
      'NOPERM',
    );
    // The gateway's console reads the standing, not the log.
    const gatewayUser = await connect('gateway');
    expect(await commandOutcome(() => gatewayUser.get(bookBandKey(keys.book(8453))))).toBe('ok');
    expect(await commandOutcome(() => gatewayUser.xrange(bookBandLogKey(keys.book(8453)), '-', '+'))).toBe('NOPERM');
    expect(await commandOutcome(() => risk.set(keys.integrator('acme'), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => risk.xadd(keys.audit(8453), '*', 'r', '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => risk.get(keys.apiKey('f'.repeat(64))))).toBe('NOPERM');
    for (const user of ['gateway', 'signer']) {
      const service = await connect(user);
      expect([user, (await new HaltStore(service, keys).active()).length]).toEqual([user, 1]);
      expect([user, await commandOutcome(() => new HaltStore(service, keys).resume({ chainId: 8453 }, halt))]).toEqual([
        user,
        'NOPERM',
      ]);
      expect([user, await commandOutcome(() => service.hdel(keys.halts(), 'chain=8453'))]).toEqual([user, 'NOPERM']);
    }
    await store.resume({ chainId: 8453 }, halt);
  });
});
