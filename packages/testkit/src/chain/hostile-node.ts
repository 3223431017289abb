/**
 * A fake EVM JSON-RPC node (HTTP POST and WebSocket on one port) that mines an honest chain of
 * its own and can be told to lie: lag, stamp heads in the future, redirect elsewhere, stall, send `null` and malformed messages, flood, answer with
 * more bytes than any real answer, jump far ahead, reorg, report other decimals, and stamp an
 * honest block's header (read by number) with another time.
 *
 * Its chain: one pair, a base token (18 decimals) against the quote token (6 decimals), whose
 * price is a property of each BLOCK (block n of the honest chain: 2000 + n % 7 × 100; a reorged
 * or made-up block has a price of its own), so a book reveals which block's state it was
 * computed from. `quote()` is linear (no spread) and the reserves are unbounded, so every
 * level of a correct book has exactly the block's price. Calls are answered for the block the
 * request names: by hash (EIP-1898), by number (the canonical block), or "latest".
 *
 * Its router executes the swaps it is told to ({@link HostileNode.swapInNextBlock}): direct calls
 * of `swap`, with the two Transfer logs and the transaction a scan reads (the ledger finds them).
 *
 * `POST /confirm` is a second, honest node of the same chain: the lies below (decimals, raw
 * answers) are not told there.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Interface, id } from 'ethers';
import { WebSocketServer, type WebSocket } from 'ws';
import { Multicall3Artifact, PmmHelperArtifact, PmmRouterArtifact } from '@pmm/contracts';
import { DECIMALS_CALLDATA, SYMBOL_CALLDATA } from '@pmm/core';

export interface FakeBlock {
  number: number;
  hash: string;
  /** Unix seconds. */
  timestamp: number;
  /** Quote units per base unit (human), the state of this block. */
  price: number;
  /** Mined on the honest chain (possibly reorged away later); false for a made-up block. */
  honest: boolean;
}

export const TOKENS = {
  quote: { address: '0x00000000000000000000000000000000000000A1', symbol: 'USDC', decimals: 6 },
  base: { address: '0x00000000000000000000000000000000000000B2', symbol: 'WETH', decimals: 18 },
};
export const CONTRACTS = {
  router: '0x0000000000000000000000000000000000000C03',
  helper: '0x0000000000000000000000000000000000000D04',
  verifier: '0x0000000000000000000000000000000000000E05',
};

/**
 * The fake router's depth: a quote() of this amount or more reverts `DepthExceeded()`, as a
 * router does for a size its curve cannot fill (far above any amount a test quotes otherwise).
 */
export const DEPTH_LIMIT = 2n ** 200n;

/**
 * The contracts' interfaces, made when a node first answers: every test file that imports
 * @pmm/testkit loads this module, few start a hostile node, and making them at load brought in
 * the whole of ethers (about 0.2 CPU s each time).
 */
let interfaces:
  | {
      helper: Interface;
      router: Interface;
      multicall: Interface;
      erc20: Interface;
      depthExceeded: string;
      transferTopic: string;
    }
  | undefined;
const abi = () =>
  (interfaces ??= {
    helper: new Interface(PmmHelperArtifact.abi),
    router: new Interface(PmmRouterArtifact.abi),
    multicall: new Interface(Multicall3Artifact.abi),
    erc20: new Interface(['function decimals() view returns (uint256)', 'function symbol() view returns (string)']),
    /** The revert data of `DepthExceeded()`: its selector. */
    depthExceeded: new Interface(['error DepthExceeded()']).getError('DepthExceeded')!.selector,
    transferTopic: id('Transfer(address,address,uint256)'),
  });
const hex = (n: number | bigint) => '0x' + n.toString(16);
const word = (v: string | bigint) =>
  '0x' + (typeof v === 'bigint' ? v.toString(16) : v.toLowerCase().slice(2)).padStart(64, '0');
/** Who sends the swaps of the fake router. */
const SWAPPER = '0x00000000000000000000000000000000000000F6';
const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

export interface HostileNode {
  readonly port: number;
  readonly httpUrl: string;
  readonly wsUrl: string;
  /** Every block ever served (honest, reorged away, made up), by hash. */
  readonly blocks: Map<string, FakeBlock>;
  /** The chain as the node presents it now: number → block. */
  readonly canonical: Map<number, FakeBlock>;
  /** Blocks reorged away, with the time (ms) they were replaced. */
  readonly orphaned: Map<FakeBlock, number>;
  head(): FakeBlock;
  /** Block parameters of every eth_call received (what the indexer pins its calls to). */
  readonly callBlockParams: unknown[];
  /** Seconds subtracted from the timestamps of blocks mined from now on (a node that lags; negative: ahead of the clock). */
  lagSeconds: number;
  /** Mining on/off. */
  mining: boolean;
  /** decimals() of the base token answers this instead of 18 for the next `count` reads (Infinity: always), except on `/confirm`. */
  lieDecimals(decimals: number, count: number): void;
  /** Replaces every answer (HTTP but `/confirm`, and WebSocket answers to requests) by this raw text while set. */
  rawAnswer: string | undefined;
  /** While set, every HTTP request but `/confirm` is answered `307 Temporary Redirect` to this URL. */
  redirectTo: string | undefined;
  /** HTTP answers (but `/confirm`) are held this many ms (a node that stalls); 0: at once. */
  stallMs: number;
  /**
   * The header of block `number` (eth_getBlockByNumber by number) answers `timestamp` (Unix s)
   * instead of its own for the next `count` reads (Infinity: always), except on `/confirm`.
   */
  lieTimestamp(number: number, timestamp: number, count: number): void;
  /**
   * A swap in the next block mined: `amountIn` raw units of the quote token in, the base token
   * out at the block's price, a direct call of the router without verification data (nobody's
   * signature: unattributed).
   */
  swapInNextBlock(amountIn: bigint): void;
  /** Sends raw text to every WebSocket client. */
  sendRaw(text: string): void;
  /** A `newHeads` notification of `block` to every subscriber (without making it canonical). */
  announce(block: FakeBlock): void;
  /** Mines one honest block now. */
  mine(): FakeBlock;
  /** Replaces the head by another block at the same height (price differs), and announces it. */
  reorgHead(): FakeBlock;
  /**
   * Claims a made-up block `by` above the head for `forMs` (announced, answered for, served
   * as the latest block), with mining paused; then drops it and mines honestly again.
   */
  jump(by: number, forMs: number): Promise<FakeBlock>;
  close(): Promise<void>;
}

export async function startHostileNode(opts: {
  chainId: number;
  port: number;
  blockMs: number;
  multicall3?: string;
}): Promise<HostileNode> {
  const blocks = new Map<string, FakeBlock>();
  const canonical = new Map<number, FakeBlock>();
  const callBlockParams: unknown[] = [];
  const sockets = new Set<WebSocket>();
  let salt = 0;
  let decimalsLie: { decimals: number; count: number } | undefined;
  const timestampLies = new Map<number, { timestamp: number; count: number }>();
  /** Swaps by transaction hash, and the transaction hashes of each block (by block hash). */
  const swaps = new Map<string, { block: FakeBlock; amountIn: bigint; amountOut: bigint }>();
  const swapsIn = new Map<string, string[]>();
  let nextSwaps: bigint[] = [];
  /** True while an answer of the honest second node (`/confirm`) is computed (synchronously). */
  let honestView = false;

  const orphaned = new Map<FakeBlock, number>();
  /** The block served as the latest one (the head, or a made-up block while a jump lasts). */
  let latest: FakeBlock | undefined;
  const makeBlock = (number: number, price: number, lagSeconds: number, honest = true): FakeBlock => {
    const hash = '0x' + createHash('sha256').update(`${opts.chainId}:${number}:${salt++}`).digest('hex');
    const block = { number, hash, timestamp: Math.floor(Date.now() / 1000) - lagSeconds, price, honest };
    blocks.set(hash, block);
    return block;
  };
  const honestPrice = (n: number) => 2000 + (n % 7) * 100;

  let head = makeBlock(1000, honestPrice(1000), 0);
  canonical.set(head.number, head);

  const header = (b: FakeBlock, timestamp = b.timestamp) => ({
    number: hex(b.number),
    hash: b.hash,
    parentHash: canonical.get(b.number - 1)?.hash ?? '0x' + '00'.repeat(32),
    timestamp: hex(timestamp),
  });

  /** A block's header read by number: the lie told about its time, while one is. */
  const headerByNumber = (b: FakeBlock) => {
    const lie = timestampLies.get(b.number);
    if (honestView || !lie || lie.count <= 0) return header(b);
    lie.count--;
    return header(b, lie.timestamp);
  };

  /** The Transfer logs of the swaps in the canonical blocks of `filter`'s range that match its topics. */
  const transferLogs = (filter: { fromBlock?: string; toBlock?: string; topics?: unknown[] }) => {
    const [, fromTopic, toTopic] = filter.topics ?? [];
    const matches = (topic: unknown, value: string) => typeof topic !== 'string' || topic.toLowerCase() === value;
    const logs = [];
    for (let n = Number(filter.fromBlock); n <= Number(filter.toBlock); n++) {
      const block = canonical.get(n);
      for (const [i, txHash] of (block ? (swapsIn.get(block.hash) ?? []) : []).entries()) {
        const swap = swaps.get(txHash)!;
        const moves: [string, string, string, bigint][] = [
          [TOKENS.quote.address, SWAPPER, CONTRACTS.router, swap.amountIn],
          [TOKENS.base.address, CONTRACTS.router, SWAPPER, swap.amountOut],
        ];
        for (const [k, [token, from, to, value]] of moves.entries()) {
          if (!matches(fromTopic, word(from)) || !matches(toTopic, word(to))) continue;
          logs.push({
            address: token.toLowerCase(),
            topics: [abi().transferTopic, word(from), word(to)],
            data: word(value),
            blockNumber: hex(n),
            blockHash: block!.hash,
            transactionHash: txHash,
            logIndex: hex(2 * i + k),
          });
        }
      }
    }
    return logs;
  };

  /** A swap's transaction: a direct call of the router's `swap`. */
  const swapTransaction = (txHash: string) => {
    const swap = swaps.get(txHash);
    if (!swap || canonical.get(swap.block.number) !== swap.block) return null;
    return {
      hash: txHash,
      blockNumber: hex(swap.block.number),
      blockHash: swap.block.hash,
      from: SWAPPER,
      to: CONTRACTS.router,
      input: abi().router.encodeFunctionData('swap', [
        TOKENS.quote.address,
        swap.amountIn,
        TOKENS.base.address,
        0n,
        BigInt(swap.block.timestamp),
        '0x',
      ]),
    };
  };

  /** The block an eth_call names: EIP-1898 object, number, or tag. */
  const blockOf = (param: unknown): FakeBlock | undefined => {
    if (typeof param === 'object' && param !== null) {
      const ref = param as { blockHash?: string; blockNumber?: string };
      if (ref.blockHash) {
        const b = blocks.get(ref.blockHash.toLowerCase());
        // requireCanonical: a block reorged away is refused, as real nodes do.
        return b && canonical.get(b.number) === b ? b : undefined;
      }
      if (ref.blockNumber) return canonical.get(Number(ref.blockNumber));
    }
    if (param === 'latest' || param === undefined) return latest ?? head;
    if (typeof param === 'string') return canonical.get(Number(param));
    return undefined;
  };

  /** One call's return data at `block`; throws for a revert. */
  const call = (to: string, data: string, block: FakeBlock): string => {
    const { quote, base } = TOKENS;
    if (same(to, CONTRACTS.helper)) {
      const fn = abi().helper.parseTransaction({ data });
      if (fn?.name === 'getQuoteToken') return abi().helper.encodeFunctionResult('getQuoteToken', [quote.address]);
      if (fn?.name === 'getListedTokens') return abi().helper.encodeFunctionResult('getListedTokens', [[base.address]]);
      if (fn?.name === 'getReserveBalances') {
        const tokens = fn.args[0] as string[];
        return abi().helper.encodeFunctionResult('getReserveBalances', [tokens.map(() => 10n ** 40n)]);
      }
    }
    if (same(to, quote.address) || same(to, base.address)) {
      const token = same(to, quote.address) ? quote : base;
      if (data === DECIMALS_CALLDATA) {
        let decimals = token.decimals;
        if (token === base && !honestView && decimalsLie && decimalsLie.count > 0) {
          decimals = decimalsLie.decimals;
          decimalsLie.count--;
        }
        return abi().erc20.encodeFunctionResult('decimals', [decimals]);
      }
      if (data === SYMBOL_CALLDATA) return abi().erc20.encodeFunctionResult('symbol', [token.symbol]);
    }
    if (same(to, CONTRACTS.router)) {
      const fn = abi().router.parseTransaction({ data });
      if (fn?.name === 'quote') {
        const [tokenIn, amountIn] = fn.args as unknown as [string, bigint];
        if (amountIn >= DEPTH_LIMIT)
          throw Object.assign(new Error('execution reverted'), { data: abi().depthExceeded });
        // price quote units per base unit, in integers: price × 10^qd per 10^bd.
        const num = BigInt(block.price) * 10n ** BigInt(quote.decimals);
        const den = 10n ** BigInt(base.decimals);
        const out = same(tokenIn, quote.address) ? (amountIn * den) / num : (amountIn * num) / den;
        return abi().router.encodeFunctionResult('quote', [out]);
      }
    }
    throw new Error('execution reverted');
  };

  const ethCall = (params: unknown[]): string => {
    callBlockParams.push(params[1]);
    const block = blockOf(params[1]);
    if (!block) throw Object.assign(new Error('header not found'), { code: -32000 });
    const { to, data } = params[0] as { to: string; data: string };
    if (opts.multicall3 && same(to, opts.multicall3)) {
      const calls = abi().multicall.decodeFunctionData('aggregate3', data)[0] as { target: string; callData: string }[];
      // As Multicall3 does: a call that reverts fails alone, its revert data as its answer.
      const results = calls.map((c) => {
        try {
          return [true, call(c.target, c.callData, block)];
        } catch (err) {
          return [false, (err as { data?: string }).data ?? '0x'];
        }
      });
      return abi().multicall.encodeFunctionResult('aggregate3', [results]);
    }
    return call(to, data, block);
  };

  /** The answer object of one request. */
  const answer = (req: { id?: unknown; method?: string; params?: unknown[] }) => {
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id: req.id, result });
    try {
      switch (req.method) {
        case 'eth_chainId':
          return reply(hex(opts.chainId));
        case 'eth_blockNumber':
          return reply(hex((latest ?? head).number));
        case 'eth_getBlockByNumber': {
          // A block by number (the ledger reads each one), else the latest.
          const which = req.params?.[0];
          if (typeof which === 'string' && /^0x[0-9a-f]+$/i.test(which)) {
            const block = canonical.get(Number.parseInt(which, 16));
            return reply(block ? headerByNumber(block) : null);
          }
          return reply(header(latest ?? head));
        }
        case 'eth_getLogs':
          // Only the swaps it was told to make move tokens on this chain.
          return reply(transferLogs((req.params?.[0] ?? {}) as never));
        case 'eth_getTransactionByHash':
          return reply(swapTransaction(String(req.params?.[0]).toLowerCase()));
        case 'eth_getBlockReceipts': {
          // Every swap it makes succeeds: the ledger's search for reverted calls finds none to trace.
          const block = canonical.get(Number(req.params?.[0]));
          return reply(
            block
              ? (swapsIn.get(block.hash) ?? []).map((txHash, i) => ({
                  transactionHash: txHash,
                  transactionIndex: hex(i),
                  blockNumber: hex(block.number),
                  status: '0x1',
                }))
              : null,
          );
        }
        case 'eth_subscribe':
          return reply('0x5ub');
        case 'eth_call':
          return reply(ethCall(req.params ?? []));
        default:
          return { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'method not found' } };
      }
    } catch (err) {
      const e = err as Error & { code?: number; data?: string };
      const error = { code: e.code ?? 3, message: e.message, ...(e.data ? { data: e.data } : {}) };
      return { jsonrpc: '2.0', id: req.id, error };
    }
  };
  const answerAll = (body: unknown) =>
    Array.isArray(body) ? body.map((r) => answer(r as never)) : answer(body as never);

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });

  const node: HostileNode = {
    port: opts.port,
    httpUrl: `http://127.0.0.1:${opts.port}`,
    wsUrl: `ws://127.0.0.1:${opts.port}`,
    blocks,
    canonical,
    orphaned,
    head: () => head,
    callBlockParams,
    lagSeconds: 0,
    mining: true,
    rawAnswer: undefined,
    redirectTo: undefined,
    stallMs: 0,
    lieDecimals(decimals, count) {
      decimalsLie = { decimals, count };
    },
    lieTimestamp(number, timestamp, count) {
      timestampLies.set(number, { timestamp, count });
    },
    swapInNextBlock(amountIn) {
      nextSwaps.push(amountIn);
    },
    sendRaw(text) {
      for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(text);
    },
    announce(block) {
      node.sendRaw(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'eth_subscription',
          params: { subscription: '0x5ub', result: header(block) },
        }),
      );
    },
    mine() {
      head = makeBlock(head.number + 1, honestPrice(head.number + 1), node.lagSeconds);
      canonical.set(head.number, head);
      const block = head;
      // Base out at the block's price: amountIn × 10^bd / (price × 10^qd).
      const amountsOut = nextSwaps.map((amountIn) => ({
        amountIn,
        amountOut:
          (amountIn * 10n ** BigInt(TOKENS.base.decimals)) /
          (BigInt(block.price) * 10n ** BigInt(TOKENS.quote.decimals)),
      }));
      nextSwaps = [];
      swapsIn.set(
        block.hash,
        amountsOut.map((amounts, i) => {
          const txHash = '0x' + createHash('sha256').update(`${block.hash}:swap:${i}`).digest('hex');
          swaps.set(txHash, { block, ...amounts });
          return txHash;
        }),
      );
      node.announce(head);
      return head;
    },
    reorgHead() {
      orphaned.set(head, Date.now());
      head = makeBlock(head.number, head.price + 50, node.lagSeconds);
      canonical.set(head.number, head);
      node.announce(head);
      return head;
    },
    async jump(by, forMs) {
      const far = makeBlock(head.number + by, 9_999, 0, false);
      node.mining = false;
      canonical.set(far.number, far);
      latest = far;
      node.announce(far);
      await new Promise((r) => setTimeout(r, forMs));
      canonical.delete(far.number);
      latest = undefined;
      node.mining = true;
      return far;
    },
    async close() {
      clearInterval(miner);
      for (const timer of stalled) clearTimeout(timer);
      server.closeAllConnections();
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };

  const stalled = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    void readBody(req).then((text) => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (node.redirectTo && req.url !== '/confirm') {
        res.writeHead(307, { location: node.redirectTo }).end();
        return;
      }
      honestView = req.url === '/confirm';
      const stall = honestView ? 0 : node.stallMs;
      const out = (!honestView && node.rawAnswer) || JSON.stringify(answerAll(body));
      honestView = false;
      const send = () => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(out);
      };
      if (stall > 0) stalled.add(setTimeout(send, stall));
      else send();
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('error', () => sockets.delete(ws));
    ws.on('message', (raw) => {
      let body: unknown;
      try {
        body = JSON.parse(raw.toString());
      } catch {
        return;
      }
      if (ws.readyState === ws.OPEN) ws.send(node.rawAnswer ?? JSON.stringify(answerAll(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port, '127.0.0.1', resolve));
  const miner = setInterval(() => {
    if (node.mining) node.mine();
  }, opts.blockMs);
  return node;
}
