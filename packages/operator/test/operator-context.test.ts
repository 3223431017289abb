/**
 * The operator commands' Redis connections on two servers (`REDIS_RECORDS_URL` apart): the
 * records' server must answer at once; the rebuildable one (REDIS_URL), which holds only the mid
 * history `markouts` reads, is reached on first use, so that `audit` and `settle` keep working
 * while that server is down.
 */
import { randomBytes } from 'node:crypto';
import { freePort } from '@pmm/testkit';
import { openOperatorContext } from '../src/cli/operator-context';

const RECORDS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function contextWith(env: Record<string, string>) {
  return openOperatorContext('operator-context-test', {
    REDIS_KEY_PREFIX: `pmm-opctx-${randomBytes(4).toString('hex')}`,
    CHAINS: '',
    CONFIG_FILE: '',
    // No stack file: the settings alone decide.
    STACK_FILE: '/nonexistent/stack.json',
    ...env,
  });
}

describe('openOperatorContext on two Redis servers', () => {
  it('behavior: with REDIS_URL down, the records are read; the mid history fails on use, naming that server', async () => {
    const downUrl = `redis://127.0.0.1:${await freePort()}`;
    const ctx = await contextWith({ REDIS_URL: downUrl, REDIS_RECORDS_URL: RECORDS_URL });
    try {
      const listed = [];
      for await (const entry of ctx.trail.list({ chains: [8453] })) listed.push(entry);
      expect(listed).toEqual([]);
      expect(await ctx.ledger.entries(8453, 0, 2_000_000_000)).toEqual([]);
      await expect(ctx.ledger.mids(8453, 0, 10)).rejects.toThrow(/127\.0\.0\.1:\d+.* is not reachable/);
    } finally {
      ctx.close();
    }
  }, 20_000);

  it('error: with the records’ server down, the command does not start, naming it', async () => {
    const downUrl = `redis://127.0.0.1:${await freePort()}`;
    await expect(contextWith({ REDIS_URL: RECORDS_URL, REDIS_RECORDS_URL: downUrl })).rejects.toThrow(
      new RegExp(`${downUrl.slice('redis://'.length).replace(/\./g, '\\.')}.* is not reachable`),
    );
  }, 20_000);
});
