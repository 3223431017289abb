/**
 * The audit trail on the sign path, over HTTP with a real Redis: every signature returned has
 * its record (written before the answer), a failed write withholds the signature (503), the
 * lookup by signature and the listing, and the retention bounds of the stream and its index.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { decodeAbiParameters, recoverAddress, type Hex } from 'viem';
import { privateRedis, sampleAuditRecord, type PrivateRedis } from '@pmm/testkit';
import {
  AUDIT_FIELDS,
  DAY_MS,
  DurableWrites,
  auditDay,
  createMetrics,
  createRedis,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { AuditReader, runAuditCommand } from '@pmm/operator';
import {
  MAX_BATCH_RECORDS,
  MAX_INDEXED_IDS,
  QuotaExceededError,
  RedisAuditTrail,
  auditTrailSizeMetric,
} from '../../src';
import {
  FIRM_BLOCK,
  INTERNAL_TOKEN,
  REDIS_URL,
  USER,
  integrator,
  startFixture,
  testRegistry,
  type Fixture,
} from '../support/fixture';

const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;
const WETH = testRegistry(8453).baseTokens[0]!.address;
const USDC = testRegistry(8453).quoteToken.address;
const USDT = testRegistry(56).quoteToken.address;
const WETH56 = testRegistry(56).baseTokens[0]!.address;

/** A fixed clock near the real one: a day index expires a retention after its day, so a date long past would expire at once. */
const NOW_S = Math.floor(Date.now() / 1000);
const NOW_MS = NOW_S * 1000 + 987;

let f: Fixture;
let reader: AuditReader;
let seq = 0;

beforeAll(async () => {
  f = await startFixture({ now: () => NOW_MS });
  await f.putIntegrator(integrator('beta'));
  reader = new AuditReader(f.redis, f.keys);
});
afterAll(async () => {
  await f.close();
});

function post(body: unknown, o: { integratorId?: string; keyId?: string; app?: Fixture['app'] } = {}) {
  let r = request(o.app ?? f.app)
    .post('/v2/swap/sign')
    .set('X-Request-Id', `audit-${++seq}`)
    .set('X-Internal-Token', INTERNAL_TOKEN)
    .set('X-Integrator-Id', o.integratorId ?? 'acme')
    .set('Content-Type', 'application/json');
  if (o.keyId !== undefined) r = r.set('X-Api-Key-Id', o.keyId);
  return r.send(JSON.stringify(body));
}

const signatureOf = (verificationData: string) => decodeAbiParameters(VD_TYPES, verificationData as Hex)[3];

describe('the audit trail on the sign path', () => {
  it('behavior: a signature returned has one record with who asked and exactly what was signed, and no secret', async () => {
    const body = { tokenIn: WETH, tokenOut: USDC, fee: '30', userAddress: USER, amountIn: '1000', minAmountOut: '7' };
    const res = await post(body, { keyId: 'pmm_live_ab12cd34' });
    expect(res.status).toBe(200);
    const signature = signatureOf(res.body.verificationData);
    const found = await reader.bySignature(8453, signature, res.body.timestamp);
    expect(found).toHaveLength(1);
    const r = found[0]!.record;
    const digest = r.digest as Hex;
    expect(r).toEqual({
      time: NOW_MS,
      chainId: 8453,
      integratorId: 'acme',
      keyId: 'pmm_live_ab12cd34',
      requestId: res.headers['x-request-id'],
      userAddress: USER.toLowerCase(),
      tokenIn: WETH.toLowerCase(),
      tokenOut: USDC.toLowerCase(),
      fee: '30',
      originRate: '0',
      amountIn: '1000',
      minAmountOut: '7',
      // The fixture's firm source: gross 2 × 1000 less the fee of 30 (0.03 %), at its block.
      amountOut: '1999',
      blockNumber: FIRM_BLOCK,
      timestamp: NOW_S,
      deadline: NOW_S + 60,
      digest,
      signature,
      signer: f.signers.get(8453)!.address,
    });
    // The digest is the one the signature signs (checked with viem, independently).
    expect((await recoverAddress({ hash: digest, signature })).toLowerCase()).toBe(r.signer.toLowerCase());
    const stored = JSON.stringify(await f.redis.xrange(f.keys.audit(8453), '-', '+'));
    expect(stored).not.toContain(INTERNAL_TOKEN);
  });

  it('behavior: without amountIn the record has no amounts; a missing or malformed key id is recorded as ""', async () => {
    const res = await post(
      { chainId: 56, tokenIn: USDT, tokenOut: WETH56, fee: '10', userAddress: USER },
      { keyId: 'bad key!' },
    );
    expect(res.status).toBe(200);
    const [entry] = await reader.bySignature(56, signatureOf(res.body.verificationData), res.body.timestamp);
    expect(entry!.record.amountIn).toBeUndefined();
    expect(entry!.record.minAmountOut).toBeUndefined();
    expect(entry!.record.keyId).toBe('');
    expect(entry!.record.chainId).toBe(56);
  });

  it('behavior: the legacy /v1 route records its signatures the same way', async () => {
    const res = await request(f.app)
      .post('/v1/swap/sign')
      .set('X-Request-Id', 'audit-v1')
      .set('X-Internal-Token', INTERNAL_TOKEN)
      .set('X-Integrator-Id', 'beta')
      .set('X-Api-Key-Id', 'pmm_v1key')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ tokenIn: WETH, tokenOut: USDC, fee: '7', userAddress: USER }));
    expect(res.status).toBe(200);
    const [entry] = await reader.bySignature(8453, signatureOf(res.body.verificationData), res.body.timestamp);
    expect(entry!.record).toMatchObject({ integratorId: 'beta', keyId: 'pmm_v1key', requestId: 'audit-v1', fee: '7' });
  });

  it('behavior: a request answered with an error writes no record', async () => {
    const before = await f.redis.xlen(f.keys.audit(8453));
    const res = await post({ tokenIn: WETH, tokenOut: USDC, fee: '30', userAddress: WETH });
    expect(res.status).toBe(403);
    expect(await f.redis.xlen(f.keys.audit(8453))).toBe(before);
  });

  it('behavior: the same quote signed twice in one second (same signature) keeps both records under it', async () => {
    const body = { tokenIn: USDC, tokenOut: WETH, fee: '100', userAddress: USER };
    const a = await post(body, { integratorId: 'acme' });
    const b = await post(body, { integratorId: 'beta' });
    expect(a.body.verificationData).toBe(b.body.verificationData);
    const found = await reader.bySignature(8453, signatureOf(a.body.verificationData), NOW_S);
    expect(found.map((e) => e.record.integratorId)).toEqual(['acme', 'beta']);
    expect(found.map((e) => e.record.requestId)).toEqual([a.headers['x-request-id'], b.headers['x-request-id']]);
  });

  it('behavior: a signature looked up under another day, another chain or not issued here finds nothing', async () => {
    const res = await post({ tokenIn: WETH, tokenOut: USDC, fee: '1', userAddress: USER });
    const signature = signatureOf(res.body.verificationData);
    expect(await reader.bySignature(8453, signature, NOW_S)).toHaveLength(1);
    expect(await reader.bySignature(8453, signature, NOW_S + 86_400)).toEqual([]);
    expect(await reader.bySignature(56, signature, NOW_S)).toEqual([]);
    expect(await reader.bySignature(8453, `0x${'11'.repeat(65)}`, NOW_S)).toEqual([]);
  });

  it('behavior: list filters by integrator, user, chain and time range (on the record time)', async () => {
    const all = async (filter: Parameters<AuditReader['list']>[0]) => {
      const out = [];
      for await (const e of reader.list(filter)) out.push(e.record);
      return out;
    };
    const every = await all({ chains: [8453, 56] });
    expect(every).toHaveLength(6); // the records of the tests above
    expect(every.filter((r) => r.chainId === 56)).toHaveLength(1);
    expect((await all({ chains: [8453], integratorId: 'beta' })).map((r) => r.fee)).toEqual(['7', '100']);
    expect(await all({ chains: [8453, 56], userAddress: WETH })).toEqual([]);
    expect((await all({ chains: [8453, 56], userAddress: USER.toUpperCase().replace('0X', '0x') })).length).toBe(
      every.length,
    );
    expect(await all({ chains: [56], fromMs: NOW_MS + 1 })).toEqual([]);
    expect(await all({ chains: [56], toMs: NOW_MS })).toEqual([]);
    expect(await all({ chains: [56], fromMs: NOW_MS, toMs: NOW_MS + 1 })).toHaveLength(1);
  });
});

describe('audit list and audit export', () => {
  const run = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditCommand(argv, {
      trail: reader,
      chain: () => {
        throw new Error('no chain needed');
      },
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    return { code, out, err };
  };

  it('behavior: export as JSON lines gives every stored record with its stream id; filters apply', async () => {
    const all = await run(['export', '--chain', '8453,56']);
    expect(all.code).toBe(0);
    const parsed = all.out.map((l) => JSON.parse(l) as { id: string; integratorId: string; chainId: number });
    expect(parsed).toHaveLength(6);
    expect(parsed.every((p) => /^\d+-\d+$/.test(p.id))).toBe(true);
    const beta = await run(['export', '--integrator', 'beta', '--user', USER]);
    expect(beta.out.map((l) => (JSON.parse(l) as { integratorId: string }).integratorId)).toEqual(['beta', 'beta']);
    const day = new Date(NOW_MS).toISOString().slice(0, 10);
    const inRange = await run(['export', '--chain', '56', '--from', day]);
    expect(inRange.out).toHaveLength(1);
    expect((await run(['export', '--chain', '56', '--to', day])).out).toEqual([]);
  });

  it('behavior: export as CSV has a header of the record fields and one row per record; list prints a line each', async () => {
    const csv = await run(['export', '--format', 'csv', '--chain', '56']);
    expect(csv.out[0]).toBe(['id', ...AUDIT_FIELDS].join(','));
    expect(csv.out).toHaveLength(2);
    expect(csv.out[1]).toContain(',56,acme,,');
    const list = await run(['list', '--chain', '56']);
    expect(list.out).toHaveLength(1);
    expect(list.out[0]).toContain('chain 56  acme  key -  request ');
    expect(list.err).toEqual(['1 record']);
  });

  it('error: usage mistakes exit 2 with the usage; a bad address or time is named', async () => {
    expect((await run(['export', '--format', 'xml'])).err[0]).toMatch(
      /^audit: --format must be jsonl or csv\n\nusage: audit/,
    );
    expect((await run(['list', '--user', '0x12'])).code).toBe(2);
    expect((await run(['list', '--from', 'soon'])).err[0]).toMatch(/^audit: --from: "soon" is not YYYY-MM-DD/);
    expect((await run(['nope'])).code).toBe(2);
    expect((await run(['tx', '8453'])).code).toBe(2);
  });

  it('behavior: the command as the operator runs it (REDIS_URL, REDIS_KEY_PREFIX) prints the same export', async () => {
    const root = path.resolve(__dirname, '../../../..');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '-r',
        path.join(root, 'scripts/lib/ts-register.cjs'),
        path.join(root, 'packages/operator/src/audit/audit.ts'),
        'export',
        '--chain',
        '56',
      ],
      { env: { ...process.env, REDIS_URL, REDIS_KEY_PREFIX: f.prefix, CHAINS: '', CONFIG_FILE: '' } },
    );
    expect(stdout).toBe(`${(await run(['export', '--chain', '56'])).out.join('\n')}\n`);
  });
});

describe('retention', () => {
  it('behavior: a write trims records older than the retention; the day index expires a retention after its day', async () => {
    const retentionMs = 30 * DAY_MS;
    const record = (signature: string) =>
      sampleAuditRecord(0, { time: Date.now(), chainId: 4663, timestamp: NOW_S, signature });
    await new RedisAuditTrail({
      keys: f.keys,
      retentionMs,
      durability: DurableWrites.unconfirmed(f.redis),
    }).record(record(`0x${'aa'.repeat(65)}`));
    const index = f.keys.auditSignatures(4663, auditDay(NOW_S));
    const expectedExpiry = (auditDay(NOW_S) + 1) * DAY_MS + retentionMs;
    expect(Number(await f.redis.pexpiretime(index))).toBe(expectedExpiry);
    expect(await f.redis.xlen(f.keys.audit(4663))).toBe(1);
    // 50 ms later, a trail whose retention ends 20 ms ago: the first record is past it, the new one is not.
    await new Promise((r) => setTimeout(r, 50));
    const later = new RedisAuditTrail({
      keys: f.keys,
      retentionMs,
      durability: DurableWrites.unconfirmed(f.redis),
      now: () => Date.now() + retentionMs - 20,
    });
    await later.record(record(`0x${'bb'.repeat(65)}`));
    const left = (await f.redis.xrange(f.keys.audit(4663), '-', '+')) as [string, string[]][];
    expect(left).toHaveLength(1);
    expect(left[0]![1][1]).toContain('bb'.repeat(65));
  });
});

/** The trail's keys under their own name, so that a case counts only its own records. */
const trailKeys = (name: string) => ({
  ...f.keys,
  audit: (c: number) => `${f.prefix}:{${c}}:${name}`,
  auditSignatures: (c: number, d: number) => `${f.prefix}:{${c}}:${name}-sig:${d}`,
});

describe('a flood of one identical request', () => {
  it('boundary: every request is in the stream; the index keeps the first MAX_INDEXED_IDS under the signature', async () => {
    const keys = trailKeys('flood');
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(f.redis),
    });
    const signature = `0x${'cc'.repeat(65)}`;
    const base = sampleAuditRecord(0, { timestamp: NOW_S, signature });
    for (let i = 0; i < MAX_INDEXED_IDS + 5; i++) await trail.record({ ...base, requestId: `flood-${i}` });
    expect(await f.redis.xlen(keys.audit(8453))).toBe(MAX_INDEXED_IDS + 5);
    const found = await new AuditReader(f.redis, keys).bySignature(8453, signature, NOW_S);
    expect(found.map((e) => e.record.requestId)).toEqual(
      Array.from({ length: MAX_INDEXED_IDS }, (_, i) => `flood-${i}`),
    );
  });
});

describe('daily signature quota', () => {
  it("behavior: past an integrator's quota on a chain and day a record is refused and nothing of it written; others and other chains go on", async () => {
    const keys = { ...trailKeys('quota'), auditQuota: (c: number, d: number) => `${f.prefix}:{${c}}:quota-q:${d}` };
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(f.redis),
    });
    const sig = (i: number) => `0x${(0xabc00 + i).toString(16).padStart(130, '0')}`;
    const rec = (i: number, integratorId: string, chainId = 8453) =>
      sampleAuditRecord(0, { chainId, integratorId, timestamp: NOW_S, signature: sig(i), requestId: `q-${i}` });
    // Three in one turn (one script call) for acme, quota 2; beta and chain 56 unaffected.
    const outcomes = await Promise.allSettled([
      trail.record(rec(1, 'acme'), 2),
      trail.record(rec(2, 'acme'), 2),
      trail.record(rec(3, 'acme'), 2),
      trail.record(rec(4, 'beta'), 2),
      trail.record(rec(5, 'acme', 56), 2),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(QuotaExceededError);
    // A later call is refused too; a record without a quota is not counted or refused.
    await expect(trail.record(rec(6, 'acme'), 2)).rejects.toBeInstanceOf(QuotaExceededError);
    await trail.record(rec(7, 'acme'), 0);
    const stored: string[] = [];
    for await (const e of new AuditReader(f.redis, keys).list({ chains: [8453, 56] })) stored.push(e.record.requestId);
    expect(stored.sort()).toEqual(['q-1', 'q-2', 'q-4', 'q-5', 'q-7']);
    expect(await f.redis.hgetall(keys.auditQuota(8453, auditDay(NOW_S)))).toEqual({ acme: '2', beta: '1' });
    // The count lives a day past its day, no longer.
    expect(Number(await f.redis.pexpiretime(keys.auditQuota(8453, auditDay(NOW_S))))).toBe(
      (auditDay(NOW_S) + 2) * DAY_MS,
    );
  });
});

describe("the trail's size as a metric", () => {
  it("behavior: signer_audit_trail_entries is each chain's stream length at scrape time", async () => {
    const keys = trailKeys('size');
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(f.redis),
    });
    const metrics = createMetrics('size-test', { defaultMetrics: false });
    auditTrailSizeMetric(metrics, f.redis, keys, [8453, 56]);
    const sig = (i: number) => `0x${(0x5150 + i).toString(16).padStart(130, '0')}`;
    await trail.record(sampleAuditRecord(0, { timestamp: NOW_S, signature: sig(1) }));
    await trail.record(sampleAuditRecord(0, { timestamp: NOW_S, signature: sig(2) }));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/signer_audit_trail_entries\{chain="8453"[^}]*\} 2/);
    expect(text).toMatch(/signer_audit_trail_entries\{chain="56"[^}]*\} 0/);
  });
});

describe('records of one turn share a script call', () => {
  it('behavior: one call per chain and day, at most MAX_BATCH_RECORDS each; every record stored, in order, and indexed', async () => {
    const keys = trailKeys('batch');
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(f.redis),
    });
    const sent = jest.spyOn(f.redis, 'sendCommand');
    try {
      const sig = (i: number) => `0x${i.toString(16).padStart(130, '0')}`;
      const on8453 = Array.from({ length: MAX_BATCH_RECORDS + 6 }, (_, i) =>
        sampleAuditRecord(0, { timestamp: NOW_S, signature: sig(i), requestId: `b-${i}` }),
      );
      const on56 = [sampleAuditRecord(0, { chainId: 56, timestamp: NOW_S, signature: sig(999), requestId: 'b-56' })];
      await Promise.all([...on8453, ...on56].map((r) => trail.record(r)));
      const scriptCalls = sent.mock.calls.filter(([c]) => /^eval/.test((c as { name: string }).name));
      // 70 records of 8453: a full call of 64 and one of 6; one call for 56.
      expect(scriptCalls).toHaveLength(3);
      const stored = (await f.redis.xrange(keys.audit(8453), '-', '+')) as [string, string[]][];
      expect(stored.map(([, fields]) => JSON.parse(fields[1]!).requestId)).toEqual(on8453.map((r) => r.requestId));
      expect(await f.redis.xlen(keys.audit(56))).toBe(1);
      const found = await new AuditReader(f.redis, keys).bySignature(8453, sig(MAX_BATCH_RECORDS + 3), NOW_S);
      expect(found.map((e) => e.record.requestId)).toEqual([`b-${MAX_BATCH_RECORDS + 3}`]);
    } finally {
      sent.mockRestore();
    }
  });
});

describe('when the trail cannot be written, the signature is not returned', () => {
  let own: PrivateRedis;
  let ownClient: RedisClient;
  let app: Fixture['app'];
  let g: Fixture;

  beforeAll(async () => {
    own = await privateRedis();
    ownClient = createRedis(own.url, { role: 'command', name: 'audit-fault' });
    await redisReady(ownClient);
    g = await startFixture({
      now: () => NOW_MS,
      override: (deps) => ({
        ...deps,
        audit: new RedisAuditTrail({
          keys: f.keys,
          retentionMs: DAY_MS,
          durability: DurableWrites.unconfirmed(ownClient),
        }),
      }),
    });
    app = g.app;
  });
  afterAll(async () => {
    ownClient.disconnect();
    await own.stop();
    await g.close();
  });

  const body = { tokenIn: WETH, tokenOut: USDC, fee: '30', userAddress: USER, amountIn: '5' };
  const expect503 = (res: request.Response) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 503,
      body: {
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'the signature could not be recorded; retry shortly',
          requestId: res.headers['x-request-id'],
        },
      },
    });
    expect(res.text).not.toMatch(/verificationData|calldata/);
  };

  it('error: Redis refuses the write at that moment (out of memory): 503 in the envelope, nothing stored', async () => {
    expect((await post(body, { app })).status).toBe(200);
    await ownClient.config('SET', 'maxmemory', '1');
    try {
      expect503(await post(body, { app }));
    } finally {
      await ownClient.config('SET', 'maxmemory', '0');
    }
    expect(await ownClient.xlen(f.keys.audit(8453))).toBe(1);
    expect((await post(body, { app })).status).toBe(200);
    expect(await ownClient.xlen(f.keys.audit(8453))).toBe(2);
  });

  it('error: Redis is gone at that moment: 503 in the envelope; signing resumes with Redis', async () => {
    await own.stop();
    expect503(await post(body, { app }));
    await own.start();
    await redisReady(ownClient, 10_000);
    const res = await post(body, { app });
    expect(res.status).toBe(200);
    expect(await ownClient.xlen(f.keys.audit(8453))).toBe(1); // the restarted server is empty: only this one
  });
});

describe('request ids in the record', () => {
  it("security: the gateway's own request id is the record's; a client's X-Request-Id is kept apart", async () => {
    // Its own fixture: the list tests below count the records of the shared one. One fee per
    // request, so that each has its own signature.
    const g = await startFixture({ now: () => NOW_MS });
    await g.putIntegrator(integrator('beta'));
    const own = new AuditReader(g.redis, g.keys);
    const r4663 = testRegistry(4663);
    const send = (headers: Record<string, string>, fee: string) =>
      request(g.app)
        .post('/v2/swap/sign')
        .set('X-Internal-Token', INTERNAL_TOKEN)
        .set('X-Integrator-Id', 'beta')
        .set('Content-Type', 'application/json')
        .set(headers)
        .send(
          JSON.stringify({
            chainId: 4663,
            tokenIn: r4663.baseTokens[0]!.address,
            tokenOut: r4663.quoteToken.address,
            fee,
            userAddress: USER,
          }),
        );
    const recorded = async (res: { body: { verificationData: string; timestamp: number } }) =>
      (await own.bySignature(4663, signatureOf(res.body.verificationData), res.body.timestamp))[0]!.record;

    // The client sent its own id: it sees it echoed, and the record names ours and its apart.
    const theirs = await send({ 'X-Request-Id': 'client-chosen-1', 'X-Service-Request-Id': 'svc-0001' }, '8');
    expect(theirs.headers['x-request-id']).toBe('client-chosen-1');
    const a = await recorded(theirs);
    expect(a.requestId).toBe('svc-0001');
    expect(a.clientRequestId).toBe('client-chosen-1');

    // It did not: one id, ours, and no client id.
    const ours = await send({ 'X-Request-Id': 'svc-0002', 'X-Service-Request-Id': 'svc-0002' }, '9');
    const b = await recorded(ours);
    expect(b.requestId).toBe('svc-0002');
    expect(b).not.toHaveProperty('clientRequestId');
    await g.close();
  });
});
