/**
 * `risk` (cli/risk-command.ts) in-process against a real Redis, under its own key prefix: each
 * scope halts, shows in status and history with who, when and why, and resumes; every hostile
 * input is refused with exit 2 and a message naming it, and changes nothing (the halts and their
 * log compared before and after); status counts the signatures of a scope the router still
 * accepts, from the audit trail.
 */
import { randomBytes } from 'node:crypto';
import {
  AUDIT_ENTRY_FIELD,
  DurableWrites,
  auditRecordJson,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { sampleAuditRecord } from '@pmm/testkit';
import { RISK_USAGE, runRiskCommand } from '../src/cli/risk-command';
import { reportErrors } from '../src/cli/run-operator-command';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `pmm-risk-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);
let redis: RedisClient;
const NOW = Date.parse('2026-11-28T03:00:00Z');

const QUOTE = `0x${'aa'.repeat(20)}`;
const WETH = `0x${'bb'.repeat(20)}`;
const USER = `0x${'cc'.repeat(20)}`;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'risk-command-test' });
  await redisReady(redis);
  await redis.set(
    keys.pairs(8453),
    JSON.stringify({
      chainId: 8453,
      quoteToken: { address: QUOTE, symbol: 'USDC', decimals: 6 },
      baseTokens: [{ address: WETH, symbol: 'WETH', decimals: 18 }],
      blockNumber: 1,
    }),
  );
  await redis.set(keys.integrator('acme'), '{}');
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

/** Runs `risk <argv>` as the CLI does (usage errors: exit 2); its code and output. */
async function risk(argv: string[], at = NOW): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
  const code = await reportErrors('risk', RISK_USAGE, io, () =>
    runRiskCommand(
      argv,
      { redis, keys, durability: DurableWrites.unconfirmed(redis), now: () => at, login: () => 'alice' },
      io,
    ),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function snapshot() {
  return { active: await redis.hgetall(keys.halts()), log: await redis.xlen(keys.haltLog()) };
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
      /--reason has a control character/,
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
});
