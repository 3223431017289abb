/**
 * `risk` (risk/risk-command.ts) in-process on the deployment's shape: two Redis servers (the
 * records, and the rebuildable data where the indexers keep the pair registries), the command as
 * its own Redis user `risk` on each (testkit's privateStackRedis renders the stack's ACL). Each
 * scope halts, shows in status and history with who, when and why, and resumes; every hostile
 * input is refused with exit 2 and a message naming it, and changes nothing (the halts and their
 * log compared before and after); a halt prints the signatures of its scope the router still
 * accepts, from the audit trail, provisional and then after 1 s; a ledger's trip shows in status,
 * is lifted by a resume and then kept in the log; a halt goes on while the registries' server is
 * down.
 */
import {
  AUDIT_ENTRY_FIELD,
  DurableWrites,
  HaltStore,
  auditRecordJson,
  BAND_LOG_FIELD,
  bookBandKey,
  bookBandLogKey,
  createRedis,
  encodeBandRecord,
  encodeBandTransition,
  type BandTransition,
  redisKeys,
  redisReady,
  type PairBandState,
  type RedisClient,
} from '@pmm/core';
import { privateStackRedis, sampleAuditRecord, type PrivateStackRedis } from '@pmm/testkit';
import { RISK_USAGE, runRiskCommand } from '../src/risk/risk-command';
import { reportErrors } from '../src/cli/run-operator-command';

const keys = redisKeys('pmm');
let stackRedis: PrivateStackRedis;
/** The administrator of each server: what the test writes as the indexers, the signer and the key CLI would. */
let redis: RedisClient;
let rebuildable: RedisClient;
/** The command's own user on each server. */
let riskRecords: RedisClient;
let riskRebuildable: RedisClient;
const NOW = Date.parse('2026-11-28T03:00:00Z');

const QUOTE = `0x${'aa'.repeat(20)}`;
const WETH = `0x${'bb'.repeat(20)}`;
const USER = `0x${'cc'.repeat(20)}`;

async function connect(url: string, name: string): Promise<RedisClient> {
  const client = createRedis(url, { name });
  await redisReady(client);
  return client;
}

beforeAll(async () => {
  stackRedis = await privateStackRedis();
  redis = await connect(stackRedis.recordsUrl, 'risk-test-records-admin');
  rebuildable = await connect(stackRedis.rebuildableUrl, 'risk-test-rebuildable-admin');
  riskRecords = await connect(stackRedis.urlOf('risk', 'records'), 'risk-test-risk');
  riskRebuildable = await connect(stackRedis.urlOf('risk', 'rebuildable'), 'risk-test-risk-pairs');
  await rebuildable.set(
    keys.pairs(8453),
    JSON.stringify({
      chainId: 8453,
      quoteToken: { address: QUOTE, symbol: 'USDC', decimals: 6 },
      baseTokens: [{ address: WETH, symbol: 'WETH', decimals: 18 }],
      blockNumber: 1,
    }),
  );
  await redis.set(keys.integrator('acme'), '{}');
  await redis.set(keys.integrator('beta'), '{}');
});

afterAll(async () => {
  for (const client of [redis, rebuildable, riskRecords, riskRebuildable]) client?.disconnect();
  await stackRedis?.stop();
});

/**
 * Runs `risk <argv>` as the CLI does (usage errors: exit 2); its code and output. The clock
 * stands at `at` until the command waits (the exposure's second reading), then at `at` + 1 s.
 */
async function risk(
  argv: string[],
  at = NOW,
  {
    registries = async () => riskRebuildable,
    whileWaiting = async () => undefined,
  }: { registries?: () => Promise<RedisClient>; whileWaiting?: () => Promise<unknown> } = {},
): Promise<{ code: number; out: string; err: string; waited: number[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const waited: number[] = [];
  let clock = at;
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
  const code = await reportErrors('risk', RISK_USAGE, io, () =>
    runRiskCommand(
      argv,
      {
        redis: riskRecords,
        registries,
        keys,
        durability: DurableWrites.unconfirmed(riskRecords),
        exposureSettleMs: 11_000,
        now: () => clock,
        sleep: async (ms) => {
          waited.push(ms);
          await whileWaiting();
          clock += ms;
        },
        login: () => 'alice',
      },
      io,
    ),
  );
  return { code, out: out.join('\n'), err: err.join('\n'), waited };
}

async function snapshot() {
  return {
    active: await redis.hgetall(keys.halts()),
    trips: await redis.hgetall(keys.haltTrips(8453)),
    log: await redis.xlen(keys.haltLog()),
  };
}

/** Records a signature in the audit trail as the signer does (its record, on the records' server). */
async function recordSignature(record: ReturnType<typeof sampleAuditRecord>): Promise<void> {
  await redis.xadd(keys.audit(record.chainId), '*', AUDIT_ENTRY_FIELD, auditRecordJson(record));
}

describe('risk halt, resume, status, history', () => {
  it('behavior: each scope halts, shows in status with who, when and why, is logged, and resumes', async () => {
    const scopes = [
      ['--chain', '8453'],
      ['--chain', '8453', '--pair', WETH.toUpperCase().replace('0X', '0x')],
      ['--integrator', 'acme'],
      ['--user', USER],
      ['--all'],
    ];
    for (const scope of scopes) {
      const halted = await risk(['halt', ...scope, '--reason', `stop ${scope.join(' ')}`]);
      expect(halted).toMatchObject({ code: 0 });
      expect(halted.out).toMatch(/^halted .* by alice: signing in it stops on every replica within 1 s/);
    }
    const status = await risk(['status', '--format', 'json']);
    const halts = (
      JSON.parse(status.out) as { halts: { name: string; kind: string; by: string; reason: string; at: string }[] }
    ).halts;
    expect(halts.map((h) => [h.name, h.kind])).toEqual(
      expect.arrayContaining([
        ['chain=8453', 'chain'],
        [`chain=8453 pair=${WETH}`, 'pair'],
        ['integrator=acme', 'integrator'],
        [`user=${USER}`, 'user'],
        ['all', 'all'],
      ]),
    );
    expect(halts.every((h) => h.by === 'alice' && h.at === '2026-11-28T03:00:00Z')).toBe(true);
    // A second halt of a scope changes nothing and says so.
    const again = await risk(['halt', '--chain', '8453', '--reason', 'again', '--by', 'bob']);
    expect(again).toMatchObject({ code: 0 });
    expect(again.out).toMatch(/^already halted: chain=8453 .* by alice: stop --chain 8453 \(nothing changed\)/);

    for (const scope of scopes) {
      const resumed = await risk(['resume', ...scope, '--reason', 'fixed', '--by', 'bob'], NOW + 60_000);
      expect(resumed).toMatchObject({ code: 0 });
      expect(resumed.out).toMatch(/^resumed .* by bob \(halted since 2026-11-28T03:00:00Z by alice\)$/);
    }
    expect(await risk(['status'])).toMatchObject({ code: 0, out: 'no halts: signing everywhere' });
    const history = JSON.parse((await risk(['history', '--format', 'json'])).out) as {
      action: string;
      name: string;
      by: string;
      reason: string;
    }[];
    expect(history).toHaveLength(10);
    expect(history[0]).toMatchObject({ action: 'halt', name: 'chain=8453', by: 'alice', reason: 'stop --chain 8453' });
    expect(history[9]).toMatchObject({ action: 'resume', name: 'all', by: 'bob', reason: 'fixed' });
    const text = (await risk(['history'])).out.split('\n');
    expect(text[0]).toBe('2026-11-28T03:00:00Z  halt    chain=8453  by alice: stop --chain 8453');
  });

  it('error: resuming a scope that is not halted exits 1 and names what is halted', async () => {
    await risk(['halt', '--chain', '8453', '--integrator', 'acme', '--reason', 'r']);
    const r = await risk(['resume', '--integrator', 'acme', '--reason', 'r']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('risk: integrator=acme is not halted; halted now: chain=8453 integrator=acme');
    expect((await risk(['resume', '--integrator', 'acme', '--chain', '8453', '--reason', 'r'])).code).toBe(0);
  });

  it.each([
    ['an unknown option', ['halt', '--chain', '8453', '--reason', 'r', '--force'], /Unknown option '--force'/],
    [
      'no scope',
      ['halt', '--reason', 'r'],
      /no scope: give --chain, --pair, --integrator or --user \(everything is --all\)/,
    ],
    [
      '--all with a part',
      ['halt', '--all', '--chain', '8453', '--reason', 'r'],
      /--all halts everything: it takes no --chain/,
    ],
    [
      'a malformed pair',
      ['halt', '--chain', '8453', '--pair', '0x12', '--reason', 'r'],
      /--pair: "0x12" is not an address/,
    ],
    ['a malformed user', ['halt', '--user', 'alice.eth', '--reason', 'r'], /--user: "alice.eth" is not an address/],
    ['a pair without its chain', ['halt', '--pair', WETH, '--reason', 'r'], /--pair needs its --chain/],
    [
      'a chain not in the registry',
      ['halt', '--chain', '1', '--reason', 'r'],
      /--chain: "1" is not a chain of the registry/,
    ],
    [
      'a chain not served',
      ['halt', '--chain', '56', '--reason', 'r'],
      /--chain: 56 is not served here \(no pair registry; served: 8453\)/,
    ],
    [
      'a pair not of the chain',
      ['halt', '--chain', '8453', '--pair', USER, '--reason', 'r'],
      /is not a base token of chain 8453's pairs/,
    ],
    [
      'the quote token as a pair',
      ['halt', '--chain', '8453', '--pair', QUOTE, '--reason', 'r'],
      /quote token, in every pair: halt the chain/,
    ],
    [
      'an integrator that does not exist',
      ['halt', '--integrator', 'ghost', '--reason', 'r'],
      /--integrator: no integrator "ghost"/,
    ],
    [
      'a malformed integrator id',
      ['halt', '--integrator', 'Bad Id', '--reason', 'r'],
      /--integrator: "Bad Id" is not an integrator id/,
    ],
    ['no reason', ['halt', '--chain', '8453'], /--reason is required/],
    ['a blank reason', ['halt', '--chain', '8453', '--reason', '   '], /--reason is required/],
    [
      'a reason over 1,000 characters',
      ['halt', '--chain', '8453', '--reason', 'x'.repeat(1_001)],
      /--reason is 1001 characters; at most 1000/,
    ],
    [
      'a reason with a control character',
      ['halt', '--chain', '8453', '--reason', 'ok\u001b[2Jgone'],
      /--reason has a control or format character/,
    ],
    [
      'a reason with a right-to-left override',
      ['halt', '--chain', '8453', '--reason', 'ok \u202edelah'],
      /--reason has a control or format character/,
    ],
    [
      'a name with a zero-width joiner',
      ['halt', '--chain', '8453', '--reason', 'r', '--by', 'al\u200dice'],
      /--by has a control or format character/,
    ],
    ['an unknown command', ['stop', '--all'], /unknown command "stop"/],
    ['an unknown format', ['status', '--format', 'yaml'], /--format: "yaml" is not text or json/],
  ])('error: %s is refused with exit 2, a message naming it, and nothing changes', async (_name, argv, message) => {
    await risk(['halt', '--user', USER, '--reason', 'in place']);
    const before = await snapshot();
    const r = await risk(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toContain('usage: risk <command>');
    expect(await snapshot()).toEqual(before);
  });

  it('behavior: status lists the pairs out of band against their references, from the standing written with each book', async () => {
    const pair = (served: boolean, withheld: boolean): PairBandState => ({
      status: served ? 'in_band' : 'out_of_band',
      mode: withheld || served ? 'enforce' : 'watch',
      withheld,
      served,
      streak: 0,
      since: 41,
      maxDeviationBelowBps: 50,
      maxDeviationAboveBps: 50,
      ...(served ? {} : { deviationBps: -123.45, ageSeconds: 12 }),
    });
    const QUIET = `0x${'dd'.repeat(20)}`;
    const band = bookBandKey(keys.book(8453));
    await rebuildable.set(
      band,
      encodeBandRecord({ block: 42, time: 1, pairs: { [WETH]: pair(false, true), [QUIET]: pair(true, false) } }),
    );
    await rebuildable.set(
      bookBandKey(keys.book(56)),
      encodeBandRecord({ block: 9, time: 1, pairs: { [QUIET]: pair(false, false) } }),
    );
    try {
      const text = (await risk(['status'])).out.split('\n');
      expect(text).toContain(
        `chain 8453 pair ${WETH} withheld since block 41: out_of_band, deviation -123.5 bps, reference age 12 s`,
      );
      expect(text).toContain(
        `chain 56 pair ${QUIET} out of band (watch: still served) since block 41: out_of_band, deviation -123.5 bps, reference age 12 s`,
      );
      expect(text.filter((l) => l.includes(QUIET) && l.includes('8453'))).toEqual([]);
      const json = JSON.parse((await risk(['status', '--format', 'json'])).out) as { outOfBand: unknown[] };
      expect(json.outOfBand).toEqual([
        {
          chainId: 8453,
          base: WETH,
          withheld: true,
          status: 'out_of_band',
          since: 41,
          deviationBps: -123.45,
          ageSeconds: 12,
        },
        {
          chainId: 56,
          base: QUIET,
          withheld: false,
          status: 'out_of_band',
          since: 41,
          deviationBps: -123.45,
          ageSeconds: 12,
        },
      ]);
      const down = await risk(['status'], NOW, { registries: () => Promise.reject(new Error('down')) });
      expect(down.out).toContain("pairs out of band: unknown (the books' server cannot be read)");
    } finally {
      await rebuildable.del(band, bookBandKey(keys.book(56)));
    }
  });

  it("behavior: history lists each pair's transitions in and out of band, from each chain's log: when, which block, why", async () => {
    const logs = [8453, 56].map((id) => bookBandLogKey(keys.book(id)));
    const transition = (over: Partial<BandTransition>): string =>
      encodeBandTransition({
        block: 41,
        time: 1_764_300_000,
        base: WETH,
        symbol: 'WETH',
        to: 'out',
        status: 'out_of_band',
        mode: 'enforce',
        withheld: true,
        deviationBps: -123.45,
        ageSeconds: 12,
        referencePrice: 3000,
        curvePrice: 2962.965,
        ...over,
      });
    await rebuildable.xadd(logs[0]!, '*', BAND_LOG_FIELD, transition({}));
    await rebuildable.xadd(
      logs[1]!,
      '*',
      BAND_LOG_FIELD,
      transition({ block: 7, time: 1_764_300_002, to: 'out', mode: 'watch', withheld: false, status: 'stale' }),
    );
    await rebuildable.xadd(
      logs[0]!,
      '*',
      BAND_LOG_FIELD,
      transition({ block: 44, time: 1_764_300_009, to: 'in', status: 'in_band', withheld: false, deviationBps: 3.2 }),
    );
    await rebuildable.xadd(logs[0]!, '*', BAND_LOG_FIELD, 'not a transition');
    try {
      const history = await risk(['history']);
      expect(history.err).toBe('risk: 1 entry of the band logs do not parse: skipped');
      expect(history.out.split('\n').slice(-3)).toEqual([
        `2025-11-28T03:20:00Z  withheld  chain=8453 pair=${WETH} (WETH) at block 41: out_of_band, deviation -123.5 bps, reference age 12 s, reference 3000, curve 2962.965`,
        `2025-11-28T03:20:02Z  out-of-band  chain=56 pair=${WETH} (WETH) at block 7: stale, deviation -123.5 bps, reference age 12 s, reference 3000, curve 2962.965`,
        `2025-11-28T03:20:09Z  restored  chain=8453 pair=${WETH} (WETH) at block 44: in_band, deviation 3.2 bps, reference age 12 s, reference 3000, curve 2962.965`,
      ]);
      const json = JSON.parse((await risk(['history', '--format', 'json'])).out) as { action: string }[];
      expect(json.filter((e) => e.action !== 'halt' && e.action !== 'resume')).toEqual([
        expect.objectContaining({
          action: 'withheld',
          chainId: 8453,
          pair: WETH,
          block: 41,
          status: 'out_of_band',
          deviationBps: -123.45,
        }),
        expect.objectContaining({ action: 'out-of-band', chainId: 56, block: 7, mode: 'watch', withheld: false }),
        expect.objectContaining({ action: 'restored', chainId: 8453, block: 44, at: '2025-11-28T03:20:09Z' }),
      ]);
      // The books' server out of reach: the halts' history all the same, and a word on what is missing.
      const down = await risk(['history'], NOW, { registries: () => Promise.reject(new Error('down')) });
      expect(down.code).toBe(0);
      expect(down.err).toBe("risk: the pairs' band transitions are unknown (the books' server cannot be read)");
      expect(down.out).not.toContain('withheld');
    } finally {
      await rebuildable.del(...logs);
    }
  });

  it('behavior: a reason of exactly 1,000 characters is kept whole', async () => {
    const reason = 'y'.repeat(1_000);
    expect((await risk(['halt', '--chain', '8453', '--pair', WETH, '--reason', reason])).code).toBe(0);
    const halts = JSON.parse((await risk(['status', '--format', 'json'])).out) as { halts: { reason: string }[] };
    expect(halts.halts.map((h) => h.reason)).toContain(reason);
    await risk(['resume', '--chain', '8453', '--pair', WETH, '--reason', 'r']);
  });

  it("behavior: status counts a scope's signatures the router still accepts, and sums their amountIn per token", async () => {
    const nowS = Math.floor(NOW / 1000);
    const records = [
      // Still valid, in the scope: counted, amounts summed in USDC.
      sampleAuditRecord(1, {
        tokenIn: QUOTE,
        tokenOut: WETH,
        amountIn: '1500000',
        timestamp: nowS - 10,
        deadline: nowS + 50,
      }),
      sampleAuditRecord(2, {
        tokenIn: QUOTE,
        tokenOut: WETH,
        amountIn: '2500000',
        timestamp: nowS - 5,
        deadline: nowS + 55,
      }),
      // No amountIn: counted, nothing summed.
      sampleAuditRecord(3, {
        tokenIn: WETH,
        tokenOut: QUOTE,
        amountIn: undefined,
        timestamp: nowS - 5,
        deadline: nowS + 55,
      }),
      // Another integrator: not in the integrator's scope.
      sampleAuditRecord(4, {
        integratorId: 'other',
        tokenIn: QUOTE,
        tokenOut: WETH,
        timestamp: nowS,
        deadline: nowS + 60,
      }),
    ].map((r) => ({ ...r, chainId: 8453 }));
    // An expired one first (the stream is in time order).
    const expired = { ...sampleAuditRecord(0, { timestamp: nowS - 120, deadline: nowS - 60 }), chainId: 8453 };
    for (const r of [expired, ...records])
      await redis.xadd(
        keys.audit(8453),
        '*',
        AUDIT_ENTRY_FIELD,
        auditRecordJson({ ...r, integratorId: r.integratorId === 'other' ? 'other' : 'acme' }),
      );
    await risk(['halt', '--integrator', 'acme', '--reason', 'picked off']);
    const status = JSON.parse((await risk(['status', '--format', 'json'])).out) as {
      halts: { name: string; exposure: { signatures: number; amountIn: unknown[]; validUntil: number } }[];
    };
    const acme = status.halts.find((h) => h.name === 'integrator=acme')!;
    expect(acme.exposure).toEqual({
      signatures: 3,
      amountIn: [{ chainId: 8453, token: QUOTE, symbol: 'USDC', raw: '4000000', amount: '4' }],
      validUntil: nowS + 55,
    });
    const text = (await risk(['status'])).out;
    expect(text).toContain(
      'still valid on-chain: 3 signatures, amountIn 4 USDC, the last until 2026-11-28T03:00:55Z (a halt cannot recall them',
    );
    await risk(['resume', '--integrator', 'acme', '--reason', 'r']);
  });

  it('behavior: a halt prints the exposure at once (provisional), again once every replica obeys it (a signature in flight then recorded), and when it is final', async () => {
    const nowS = Math.floor(NOW / 1000);
    const signed = (n: number) =>
      sampleAuditRecord(n, {
        chainId: 56,
        integratorId: 'beta',
        tokenIn: QUOTE,
        tokenOut: WETH,
        amountIn: '7000000',
        timestamp: nowS - 2,
        deadline: nowS + 58,
      });
    await recordSignature(signed(100));
    const r = await risk(['halt', '--integrator', 'beta', '--reason', 'exposure'], NOW, {
      // A signature past the halt check when the halt was made, recorded while the command waits.
      whileWaiting: () => recordSignature(signed(101)),
    });
    expect(r.code).toBe(0);
    expect(r.waited).toEqual([1_000]);
    const lines = r.out.split('\n');
    expect(lines[1]).toMatch(/^ {2}provisional: still valid on-chain: 1 signature, amountIn 7000000 of 0xaa/);
    expect(lines[2]).toMatch(/^ {2}after 1 s: still valid on-chain: 2 signatures, amountIn 14000000 of 0xaa/);
    expect(lines[3]).toBe(
      '  final from 2026-11-28T03:00:11Z (signatures in flight at the halt are recorded by then): `risk status`',
    );
    await risk(['resume', '--integrator', 'beta', '--reason', 'r']);
  });

  it("security: a ledger's trip shows in status and history, makes a halt of its scope a no-op, and only an operator's resume lifts it, into the log", async () => {
    const ledger = await connect(stackRedis.urlOf('ledger-8453', 'records'), 'risk-test-ledger');
    try {
      const trip = {
        scope: { integratorId: 'acme' },
        reason: 'limit integrator-notional: 1200 USDC in 60 s',
        by: 'ledger-8453',
        at: NOW - 5_000,
        trip: { limit: 'integrator-notional', value: '1200', threshold: '1000' },
      };
      expect(await new HaltStore(ledger, keys).trip(8453, trip)).toEqual({ made: true });
      const status = await risk(['status']);
      expect(status.out).toContain(
        'integrator=acme  halted since 2026-11-28T02:59:55Z (0 min) by ledger-8453: limit integrator-notional: 1200 USDC in 60 s [limit integrator-notional tripped: value 1200, threshold 1000]',
      );
      const again = await risk(['halt', '--integrator', 'acme', '--reason', 'me too']);
      expect(again.out).toMatch(/^already halted: integrator=acme .* by ledger-8453/);
      const history = await risk(['history']);
      expect(history.out).toContain('2026-11-28T02:59:55Z  halt    integrator=acme  by ledger-8453');
      const resumed = await risk(['resume', '--integrator', 'acme', '--reason', 'reviewed'], NOW + 1_000);
      expect(resumed.out).toBe(
        'resumed integrator=acme at 2026-11-28T03:00:01Z by alice (halted since 2026-11-28T02:59:55Z by ledger-8453)',
      );
      expect(await redis.hgetall(keys.haltTrips(8453))).toEqual({});
      const events = JSON.parse((await risk(['history', '--format', 'json'])).out) as { action: string; by: string }[];
      expect(events.slice(-2).map((e) => [e.action, e.by])).toEqual([
        ['halt', 'ledger-8453'],
        ['resume', 'alice'],
      ]);
    } finally {
      ledger.disconnect();
    }
  });

  it("security: an unreadable trip of a ledger halts that ledger's chain, never throws, and a resume of the chain clears it", async () => {
    await redis.hset(keys.haltTrips(56), 'all', JSON.stringify({ scope: {}, reason: 'x', by: 'ledger-56', at: 1 }));
    await redis.hset(keys.haltTrips(56), 'chain=56 pair=0x01', 'not json');
    const status = JSON.parse((await risk(['status', '--format', 'json'])).out) as {
      halts: { name: string; by: string }[];
      unreadableTrips: unknown[];
    };
    expect(status.halts.filter((h) => h.name.startsWith('chain=')).map((h) => [h.name, h.by])).toEqual([
      ['chain=56', 'ledger-56'],
    ]);
    expect(status.unreadableTrips).toHaveLength(2);
    expect(await risk(['resume', '--chain', '56', '--reason', 'cleared'])).toMatchObject({ code: 0, err: '' });
    expect(await redis.hgetall(keys.haltTrips(56))).toEqual({});
  });

  it("security: an entry of the halts' log that does not parse is skipped and counted; history lists the rest", async () => {
    await risk(['halt', '--chain', '8453', '--reason', 'before']);
    await redis.xadd(keys.haltLog(), '*', 'event', JSON.stringify({ action: 'resume', reason: 'no scope' }));
    await risk(['resume', '--chain', '8453', '--reason', 'after'], NOW + 1_000);
    const history = await risk(['history']);
    expect(history.code).toBe(0);
    expect(history.err).toBe("risk: 1 entry of the halts' log do not parse: skipped");
    expect(history.out.split('\n').slice(-2)).toEqual([
      '2026-11-28T03:00:00Z  halt    chain=8453  by alice: before',
      '2026-11-28T03:00:01Z  resume  chain=8453  by alice: after',
    ]);
  });

  it("behavior: a halt of a chain or a pair goes on while the pair registries' server is down, and says what it could not check", async () => {
    const down = async (): Promise<RedisClient> => {
      throw new Error('connect ECONNREFUSED');
    };
    const r = await risk(['halt', '--chain', '8453', '--pair', WETH, '--reason', 'crisis'], NOW, { registries: down });
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      'risk: the pair registries cannot be read (connect ECONNREFUSED): --chain and --pair not checked, halting as given',
    );
    expect(r.out).toMatch(new RegExp(`^halted chain=8453 pair=${WETH} at`));
    expect(await redis.hexists(keys.halts(), `chain=8453 pair=${WETH}`)).toBe(1);
    await risk(['resume', '--chain', '8453', '--pair', WETH, '--reason', 'r']);
  });
});
