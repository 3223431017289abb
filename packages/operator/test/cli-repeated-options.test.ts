/**
 * An option given twice to an operator command (cli-options.ts, through core's parseCommandLine)
 * is a usage error, exit 2, and nothing is done: no halt written (`risk halt --chain 8453 --chain
 * 56` used to halt 56 alone and exit 0), no report printed or written. None of these commands
 * documents an option that repeats (a list is comma-separated: `--chain 8453,56`).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DurableWrites, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { UsageError, parseOptions } from '../src/cli/cli-options';
import { AUDIT_USAGE, runAuditCommand } from '../src/audit/audit-command';
import { runMarkoutsCommand } from '../src/markouts/markouts-command';
import { RISK_USAGE, runRiskCommand } from '../src/risk/risk-command';
import { runSettleCommand } from '../src/settle/settle-command';
import { reportErrors } from '../src/cli/run-operator-command';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-cli-repeated-${process.pid}-${Date.now()}`;
const keys = redisKeys(prefix);
let redis: RedisClient;
let dir: string;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'cli-repeated-options' });
  await redisReady(redis);
  dir = mkdtempSync(path.join(tmpdir(), 'cli-repeated-'));
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** What a command prints, by stream, and the io that collects it. */
function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

const unreachable = (what: string) => () => {
  throw new Error(`${what} reached: the command went past its options`);
};

describe('parseOptions', () => {
  it('security: an option given twice is a UsageError naming it, a flag too; once each still parses', () => {
    expect(() => parseOptions(['--chain', '8453', '--chain', '56'], ['chain'])).toThrow(UsageError);
    expect(() => parseOptions(['--chain', '8453', '--chain', '56'], ['chain'])).toThrow('--chain given more than once');
    expect(() => parseOptions(['--chain=8453', '--chain', '8453'], ['chain'])).toThrow(UsageError);
    expect(() => parseOptions(['--all', '--reason', 'r', '--all'], ['reason'], ['all'])).toThrow(
      '--all given more than once',
    );
    expect(parseOptions(['--chain', '8453,56', '--all'], ['chain'], ['all'])).toEqual({
      values: { chain: '8453,56' },
      flags: new Set(['all']),
      positionals: [],
    });
  });
});

describe('each command refuses a repeated option: exit 2, nothing done', () => {
  it('security: risk halt with --chain twice halts nothing (no halt, no log entry, no key written)', async () => {
    // Both chains served here: without the refusal, the last one (56) would be halted.
    for (const chainId of [8453, 56])
      await redis.set(
        keys.pairs(chainId),
        JSON.stringify({ chainId, quoteToken: { address: `0x${'aa'.repeat(20)}` }, baseTokens: [], blockNumber: 1 }),
      );
    const before = (await redis.keys(`${prefix}:*`)).sort();
    for (const argv of [
      ['halt', '--chain', '8453', '--chain', '56', '--reason', 'incident'],
      ['halt', '--all', '--reason', 'one', '--reason', 'two'],
      ['halt', '--all', '--all', '--reason', 'incident'],
      ['resume', '--chain', '8453', '--chain', '56', '--reason', 'incident'],
    ]) {
      const run = io();
      const code = await reportErrors('risk', RISK_USAGE, run.io, () =>
        runRiskCommand(
          argv,
          {
            redis,
            registries: async () => redis,
            keys,
            durability: DurableWrites.unconfirmed(redis),
            exposureSettleMs: 0,
            sleep: async () => undefined,
            login: () => 'alice',
          },
          run.io,
        ),
      );
      expect([argv, code, run.out]).toEqual([argv, 2, []]);
      expect(run.err.join('\n')).toMatch(/^risk: --(chain|reason|all) given more than once\n\nusage: risk/);
    }
    expect((await redis.keys(`${prefix}:*`)).sort()).toEqual(before);
    expect(await redis.exists(keys.halts(), keys.haltLog(), keys.haltTrips(8453), keys.haltTrips(56))).toBe(0);
  });

  it('security: audit export and tx with an option twice print nothing', async () => {
    for (const argv of [
      ['export', '--format', 'jsonl', '--format', 'csv'],
      ['list', '--chain', '8453', '--chain', '56'],
      ['tx', '8453', `0x${'11'.repeat(32)}`, '--json', '--json'],
    ]) {
      const run = io();
      const code = await runAuditCommand(argv, {
        trail: {
          bySignature: unreachable('the audit trail'),
          list: () => ({ [Symbol.asyncIterator]: unreachable('the audit trail') }),
        },
        chain: unreachable('the chain'),
        ...run.io,
      });
      expect([argv, code, run.out]).toEqual([argv, 2, []]);
      expect(run.err.join('\n')).toMatch(/^audit: --(format|chain|json) given more than once\n\n/);
      expect(run.err.join('\n')).toContain(AUDIT_USAGE);
    }
  });

  it('security: settle with --out twice writes no report, to either file', async () => {
    const [first, second] = [path.join(dir, 'first.json'), path.join(dir, 'second.json')];
    const run = io();
    const code = await runSettleCommand(['--month', '2026-10', '--out', first, '--out', second, '--quiet'], {
      lookup: { bySignature: unreachable('the audit trail'), oldest: unreachable('the audit trail') },
      // No chain configured: without the refusal, an empty report would be written to the second file.
      chains: [],
      chain: unreachable('the chain'),
      ...run.io,
    });
    expect([code, run.out]).toEqual([2, []]);
    expect(run.err.join('\n')).toMatch(/^settle: --out given more than once\n\n/);
    expect([existsSync(first), existsSync(second)]).toEqual([false, false]);
  });

  it('security: markouts with --format twice prints no report', async () => {
    const run = io();
    const code = await runMarkoutsCommand(
      ['--from', '2026-10-01', '--to', '2026-10-02', '--format', 'json', '--format', 'csv'],
      { ledger: { entries: async () => [], mids: async () => [] }, ...run.io },
    );
    expect([code, run.out]).toEqual([2, []]);
    expect(run.err.join('\n')).toMatch(/^markouts: --format given more than once\n\n/);
  });
});
