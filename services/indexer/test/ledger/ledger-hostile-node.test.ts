/**
 * The ledger against a node that lags or floods (the fake node of the testkit's hostile-node.ts, a real
 * Redis): it keeps the indexer's rules. Nothing is read or written past a head older than
 * MAX_HEAD_LAG_MS; an answer above MAX_RPC_ANSWER_BYTES fails the block, which is read again once
 * the node answers sanely, and the ledger goes on from the block after its cursor: no gap.
 */
import Redis from 'ioredis';
import { createLogger, redisKeys } from '@pmm/core';
import { HOSTILE_NODE_CONTRACTS as CONTRACTS, freePort, startHostileNode, until, type HostileNode } from '@pmm/testkit';
import { loadLedgerConfig } from '../../src/ledger/ledger-config';
import { startLedger, type RunningLedger } from '../../src/ledger/ledger';
import { REDIS_URL, deleteKeys, randomPrefix } from '../support/redis';

const prefix = randomPrefix();
const keys = redisKeys(prefix);
let redis: Redis;
let node: HostileNode;
let ledger: RunningLedger | undefined;

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  node = await startHostileNode({ chainId: 8453, port: await freePort(), blockMs: 200 });
});
afterAll(async () => {
  await ledger?.stop();
  await node.close();
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const cursor = async () => {
  const raw = await redis.get(keys.ledgerCursor(8453));
  return raw ? (JSON.parse(raw) as { number: number; hash: string }) : undefined;
};
const metric = async (name: string) => {
  const text = await (await fetch(`http://127.0.0.1:${ledger!.served.port}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((t, m) => t + Number(m[2]), 0);
};

it('security: a lagging node gets nothing read nor written; a flood fails the block, which is read again without a gap', async () => {
  node.lagSeconds = 3_600;
  node.mine();
  ledger = await startLedger(
    loadLedgerConfig({
      env: {
        CHAIN_ID: '8453',
        CHAINS: JSON.stringify({ 8453: { chainId: 8453, wsUrl: node.wsUrl, contracts: CONTRACTS } }),
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        PORT: '0',
        MAX_HEAD_LAG_MS: '5000',
        MAX_RPC_ANSWER_BYTES: '65536',
        HEARTBEAT_MS: '200',
        LEDGER_RETRY_MS: '50',
      },
      file: {},
    }),
    { logger: createLogger({ service: 'ledger', level: 'error' }), defaultMetrics: false },
  );
  // An hour behind the clock: heads are refused, the ledger holds nothing.
  await until(async () => (await metric('ledger_heads_refused_total')) >= 3, 10_000);
  expect(await cursor()).toBeUndefined();
  expect(await redis.exists(keys.ledger(8453), keys.ledgerBlocks(8453))).toBe(0);

  // The node catches up: the ledger starts at the first head it admits.
  node.lagSeconds = 0;
  node.mine();
  // The first cursor seen (one read: the ledger may commit another block before a second read).
  const start = await until(async () => (await cursor())?.number, 10_000);

  // A flood: every answer 100 KB, above MAX_RPC_ANSWER_BYTES. The ledger's blocks fail.
  const errorsBefore = await metric('ledger_block_errors_total');
  node.mining = false;
  node.rawAnswer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'x'.repeat(100_000) });
  node.mining = true;
  node.mine();
  await until(async () => (await metric('ledger_block_errors_total')) > errorsBefore, 10_000);
  // Each oversized answer is counted, as the indexer counts it (NodeSendsJunk's kind of signal).
  expect(await metric('ledger_node_messages_dropped_total')).toBeGreaterThan(0);
  const during = (await cursor())!.number;
  node.rawAnswer = undefined;
  // Sane again: every block after the cursor is read, none skipped.
  const target = node.head().number + 2;
  while (node.head().number < target) node.mine();
  await until(async () => (await cursor())!.number >= target, 10_000);
  const held = (await redis.hkeys(keys.ledgerBlocks(8453))).map(Number).sort((a, b) => a - b);
  // It may have committed a block or two before the first read of the cursor; from there on, no gap.
  expect(held[0]).toBeLessThanOrEqual(start);
  expect(held).toEqual(Array.from({ length: held.length }, (_, i) => held[0]! + i));
  expect(during).toBeLessThan(target);
  for (const n of held) expect(await redis.hget(keys.ledgerBlocks(8453), String(n))).toBe(node.canonical.get(n)!.hash);
});
