/**
 * The ledger's limits against a node that lies about a block's time (the testkit's hostile node,
 * a real Redis, the ledger in-process): the head guard admits only heads, and the headers of the
 * blocks behind them come from the same node. A header stamped in 2100 would become the limits'
 * clock and expire every swap after it as it arrives; one stamped two hours before its parent
 * would expire its own swap at once. Either way the cap would not trip.
 *
 * Here the node lies about one block's time for its first reads, then answers honestly; two of
 * the three blocks around the lie hold a swap each, where the lie would have hidden one. The
 * ledger refuses the lying header (counted as a failed block), reads the block again, commits it
 * with its honest time, and the pair's cap trips on the two swaps (12,000 against 10,000).
 */
import {
  HaltStore,
  createLogger,
  createRedis,
  haltScopeName,
  parseLedgerEntry,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import {
  HOSTILE_NODE_CONTRACTS as CONTRACTS,
  HOSTILE_NODE_TOKENS as TOKENS,
  freePort,
  startHostileNode,
  until,
  type FakeBlock,
  type HostileNode,
} from '@pmm/testkit';
import { loadLedgerConfig } from '../../src/ledger/ledger-config';
import { startLedger, type RunningLedger } from '../../src/ledger/ledger';
import { REDIS_URL, deleteKeys, randomPrefix } from '../support/redis';

jest.setTimeout(60_000);

const CHAIN = 8453;
/** 6,000 of the quote token (6 decimals): two of them break a cap of 10,000. */
const SWAP = 6_000n * 10n ** 6n;
/** 2100-01-01T00:00:00Z. */
const YEAR_2100 = 4_102_444_800;
/** The first reads of the lying header that lie: the old code read it three times for one block. */
const LIES = 3;

let redis: RedisClient;
let node: HostileNode;
let ledger: RunningLedger | undefined;
const prefixes: string[] = [];

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'limits-hostile-node' });
  await redisReady(redis);
  node = await startHostileNode({ chainId: CHAIN, port: await freePort(), blockMs: 60_000 });
  // The test mines: each block is made when the test says.
  node.mining = false;
});
afterEach(async () => {
  await ledger?.stop();
  ledger = undefined;
});
afterAll(async () => {
  await node.close();
  for (const prefix of prefixes) await deleteKeys(redis as never, prefix);
  redis.disconnect();
});

async function startLedgerWithCap(prefix: string): Promise<RunningLedger> {
  return startLedger(
    loadLedgerConfig({
      env: {
        CHAIN_ID: String(CHAIN),
        CHAINS: JSON.stringify({ [CHAIN]: { chainId: CHAIN, wsUrl: node.wsUrl, contracts: CONTRACTS } }),
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        REDIS_DURABILITY: 'none',
        PORT: '0',
        MAX_HEAD_LEAD_MS: '3000',
        HEARTBEAT_MS: '200',
        LEDGER_RETRY_MS: '50',
        LIMIT_WINDOW_SECONDS: '3600',
        LIMIT_PAIR_NOTIONAL: '10000',
      },
      file: {},
    }),
    { logger: createLogger({ service: 'ledger', level: 'error' }), defaultMetrics: false },
  );
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ledger!.served.port}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((t, m) => t + Number(m[2]), 0);
}

/** The three blocks the test mines: the lie is told about `lying`'s time; two of them hold a swap each. */
type Block = 'before' | 'lying' | 'after';

it.each<[string, (parent: FakeBlock) => number, Block[]]>([
  // The clock at 2100 expires the swap before it, and the one after as soon as it arrives.
  ['stamped in 2100, far ahead of the clock', () => YEAR_2100, ['before', 'after']],
  // Its own swap expires at once (the window's front is its next swap, still inside).
  ['stamped two hours before its parent', (parent) => parent.timestamp - 7_200, ['lying', 'after']],
])(
  'security: a header %s, among honest ones, is not committed but read again, and the pair cap still trips',
  async (_, stamp, holding) => {
    const prefix = randomPrefix();
    prefixes.push(prefix);
    const keys = redisKeys(prefix);
    const cursor = async () => {
      const raw = await redis.get(keys.ledgerCursor(CHAIN));
      return raw ? (JSON.parse(raw) as { number: number; hash: string }).number : undefined;
    };
    ledger = await startLedgerWithCap(prefix);
    // The ledger starts at the first head it admits.
    await until(
      async () => {
        node.mine();
        return cursor();
      },
      10_000,
      'the ledger following the node',
      200,
    );

    const errorsBefore = await metric('ledger_block_errors_total');
    const mined = new Map<Block, FakeBlock>();
    for (const block of ['before', 'lying', 'after'] as const) {
      // The lying block's header lies about its time for the first reads, then tells the truth.
      if (block === 'lying') node.lieTimestamp(node.head().number + 1, stamp(node.head()), LIES);
      if (holding.includes(block)) node.swapInNextBlock(SWAP);
      mined.set(block, node.mine());
    }
    const lying = mined.get('lying')!;

    const pair = { chainId: CHAIN, pair: TOKENS.base.address.toLowerCase() };
    const halt = await until(
      async () =>
        (await new HaltStore(redis, keys).active()).find((h) => haltScopeName(h.scope) === haltScopeName(pair)),
      10_000,
      'the pair halted by its cap',
      50,
    );
    expect(halt.trip).toMatchObject({ limit: 'pair-notional', value: '12000', threshold: '10000' });
    // Each lying read refused the block, counted like any block that failed.
    expect((await metric('ledger_block_errors_total')) - errorsBefore).toBe(LIES);
    // The block is committed once, with its hash and its honest time.
    expect(await redis.hget(keys.ledgerBlocks(CHAIN), String(lying.number))).toBe(lying.hash);
    const entries = (await redis.zrange(keys.ledger(CHAIN), 0, -1)).map((json) => parseLedgerEntry(json));
    expect(entries.map((e) => [e.blockNumber, e.blockTime])).toEqual(
      holding.map((block) => [mined.get(block)!.number, mined.get(block)!.timestamp]),
    );
  },
);
