/**
 * The on-chain facts the operator commands read (`audit tx`, `settle`): blocks, transactions,
 * standard ERC-20 `Transfer` logs, token metadata (read as core's token-metadata.ts reads it) and
 * raw calls for the node's tracers (call-trace.ts), over HTTP JSON-RPC (ethers' provider: a
 * one-shot batch tool, so none of the long-lived subscription pitfalls apply; requests made
 * together go out as one JSON-RPC batch).
 *
 * Every request is counted by method (`calls`, for the progress and the benchmark) and retried on
 * what looks transient (a dropped connection, a timeout, a rate limit, a 5xx), never on an answer
 * that will not change (an unknown method, bad parameters, a revert).
 */
import { Interface, JsonRpcProvider, Network, id, toQuantity, zeroPadValue } from 'ethers';
import {
  DECIMALS_CALLDATA,
  NodeAnswerTooLarge,
  NodeRedirectError,
  SYMBOL_CALLDATA,
  decodeTokenDecimals,
  decodeTokenSymbol,
  nodeFetchRequest,
  postToNode,
} from '@pmm/core';

/** `Transfer(address,address,uint256)`: the standard ERC-20 event every token emits. */
const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

export interface TransferLog {
  txHash: string;
  blockNumber: number;
  logIndex: number;
  /** Lowercase addresses. */
  token: string;
  from: string;
  to: string;
  value: bigint;
}

export interface ChainTransaction {
  hash: string;
  blockNumber: number | undefined;
  /** Lowercase; undefined for a contract creation. */
  from: string;
  to: string | undefined;
  input: string;
}

export interface TokenMeta {
  symbol: string;
  decimals: number;
}

/** What the commands read from a chain; tests may pass another implementation. */
export interface ChainReader {
  readonly chainId: number;
  latestBlock(): Promise<number>;
  /** Unix seconds of a block. */
  blockTime(blockNumber: number): Promise<number>;
  /** Transfer logs of any token with `address` on the given side, in [fromBlock, toBlock]. */
  transfers(address: string, side: 'from' | 'to', fromBlock: number, toBlock: number): Promise<TransferLog[]>;
  transaction(hash: string): Promise<ChainTransaction | undefined>;
  /** 1 success, 0 reverted, undefined not mined. */
  receiptStatus(hash: string): Promise<number | undefined>;
  /** The quote token the router's read-only helper reports (`getQuoteToken()`), lowercase. */
  quoteToken(helper: string): Promise<string>;
  token(address: string): Promise<TokenMeta>;
  /** A raw JSON-RPC request (tracers); rejects with the node's error, retried when transient. */
  send(method: string, params: unknown[]): Promise<unknown>;
  /** JSON-RPC requests made so far, by method. */
  readonly calls: ReadonlyMap<string, number>;
  close(): void;
}

/**
 * The largest answer read from a node (a struct-log trace with memory is megabytes on Hardhat;
 * 128 MiB is far above any real transaction's): past it the request fails, and the transaction is
 * listed apart, instead of the command exhausting memory on a hostile or broken node.
 */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

/** The node's answer passed MAX_ANSWER_BYTES: it would be the same again, so it is not retried. */
export class AnswerTooLarge extends Error {}

const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 250;

/** The node's own JSON-RPC error code and message inside an ethers error, when there is one. */
export function rpcError(err: unknown): { code?: number; message: string } {
  const e = err as {
    error?: { code?: unknown; message?: unknown };
    info?: { error?: { code?: unknown; message?: unknown } };
  };
  const inner = e?.error ?? e?.info?.error;
  if (inner && typeof inner.message === 'string')
    return { code: typeof inner.code === 'number' ? inner.code : undefined, message: inner.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

/**
 * An answer the node will give again: the request itself is refused (unknown method, bad
 * parameters, execution reverted), a redirect (never followed: core node-http.ts). Anything else (no answer, 429, 5xx, a node-side timeout) may
 * pass on a retry.
 */
function isFinal(err: unknown): boolean {
  if (err instanceof AnswerTooLarge || err instanceof NodeRedirectError) return true;
  const { code, message } = rpcError(err);
  if (code !== undefined && [-32600, -32601, -32602, 3].includes(code)) return true;
  if ((err as { code?: string })?.code === 'CALL_EXCEPTION') return true;
  return /not supported|does not exist|not available|not found|unknown tracer|only supports|invalid/i.test(message);
}

async function withRetry<T>(calls: Map<string, number>, method: string, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    try {
      return await run();
    } catch (err) {
      if (attempt >= ATTEMPTS || isFinal(err)) throw err;
      await new Promise((r) => setTimeout(r, FIRST_BACKOFF_MS * 2 ** (attempt - 1)));
    }
  }
}

/** The one helper-contract call the commands make. */
const helper = new Interface(['function getQuoteToken() view returns (address)']);

/** An eth_getLogs entry as the node sends it (hex quantities). */
interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: string;
  blockTimestamp?: string;
}

let requestId = 0;

/** One JSON-RPC request over HTTP; rejects with the node's error as ethers does (`error: {code, message}`). */
async function rawRequest(rpcUrl: string, method: string, params: unknown[], maxBytes: number): Promise<unknown> {
  let res;
  try {
    res = await postToNode(rpcUrl, JSON.stringify({ jsonrpc: '2.0', id: ++requestId, method, params }), {
      signal: AbortSignal.timeout(120_000),
      maxBytes,
      readErrors: true,
    });
  } catch (err) {
    if (err instanceof NodeAnswerTooLarge) throw new AnswerTooLarge(`${method}: ${err.message}`);
    throw err;
  }
  const text = res.text;
  let body: { result?: unknown; error?: { code?: number; message?: string } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new Error(`${method}: HTTP ${res.status}, not a JSON-RPC answer`);
  }
  if (body.error) throw Object.assign(new Error(`${method}: ${body.error.message ?? 'error'}`), { error: body.error });
  return body.result;
}

export function createChainReader(
  chainId: number,
  rpcUrl: string,
  options: { maxAnswerBytes?: number } = {},
): ChainReader {
  const maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const network = Network.from(chainId);
  // A redirect from the node fails the request (core node-http.ts), here as in rawRequest.
  const provider = new JsonRpcProvider(nodeFetchRequest(rpcUrl), network, { staticNetwork: network });
  const tokens = new Map<string, Promise<TokenMeta>>();
  const times = new Map<number, Promise<number>>();
  const calls = new Map<string, number>();
  const retried = <T>(method: string, run: () => Promise<T>) => withRetry(calls, method, run);
  return {
    chainId,
    calls,
    latestBlock: () => retried('eth_blockNumber', () => provider.getBlockNumber()),
    blockTime(blockNumber) {
      let t = times.get(blockNumber);
      if (!t) {
        t = retried('eth_getBlockByNumber', () => provider.getBlock(blockNumber)).then((b) => {
          if (!b) throw new Error(`chain ${chainId}: block ${blockNumber} not found`);
          return b.timestamp;
        });
        times.set(blockNumber, t);
      }
      return t;
    },
    async transfers(address, side, fromBlock, toBlock) {
      const who = zeroPadValue(address.toLowerCase(), 32);
      const topics = side === 'from' ? [TRANSFER_TOPIC, who] : [TRANSFER_TOPIC, null, who];
      // Not retried here: scan-swaps.ts halves a refused window instead. Raw, not provider.getLogs:
      // ethers drops the logs' blockTimestamp.
      calls.set('eth_getLogs', (calls.get('eth_getLogs') ?? 0) + 1);
      const logs = (await provider.send('eth_getLogs', [
        { topics, fromBlock: toQuantity(fromBlock), toBlock: toQuantity(toBlock) },
      ])) as RawLog[];
      const out: TransferLog[] = [];
      for (const log of logs) {
        const blockNumber = Number(log.blockNumber);
        // Nodes that put the block's time in each log (geth since 1.14.x, reth, anvil) spare a
        // block request per block: most of settle's requests on a chain with few swaps per block.
        if (log.blockTimestamp !== undefined && !times.has(blockNumber))
          times.set(blockNumber, Promise.resolve(Number(log.blockTimestamp)));
        // A non-standard event with the same topic (e.g. ERC-721's indexed tokenId) is not an amount.
        if (log.topics.length !== 3 || log.data.length !== 66) continue;
        out.push({
          txHash: log.transactionHash.toLowerCase(),
          blockNumber,
          logIndex: Number(log.logIndex),
          token: log.address.toLowerCase(),
          from: `0x${log.topics[1]!.slice(26)}`.toLowerCase(),
          to: `0x${log.topics[2]!.slice(26)}`.toLowerCase(),
          value: BigInt(log.data),
        });
      }
      return out;
    },
    async transaction(hash) {
      const tx = await retried('eth_getTransactionByHash', () => provider.getTransaction(hash));
      if (!tx) return undefined;
      return {
        hash: tx.hash.toLowerCase(),
        blockNumber: tx.blockNumber ?? undefined,
        from: tx.from.toLowerCase(),
        to: tx.to?.toLowerCase(),
        input: tx.data.toLowerCase(),
      };
    },
    async receiptStatus(hash) {
      const receipt = await retried('eth_getTransactionReceipt', () => provider.getTransactionReceipt(hash));
      return receipt?.status ?? undefined;
    },
    async quoteToken(helperAddress) {
      const data = await retried('eth_call', () =>
        provider.call({ to: helperAddress, data: helper.encodeFunctionData('getQuoteToken') }),
      );
      return String(helper.decodeFunctionResult('getQuoteToken', data)[0]).toLowerCase();
    },
    token(address) {
      const key = address.toLowerCase();
      let meta = tokens.get(key);
      if (!meta) {
        meta = Promise.all([
          retried('eth_call', () => provider.call({ to: key, data: SYMBOL_CALLDATA })),
          retried('eth_call', () => provider.call({ to: key, data: DECIMALS_CALLDATA })),
        ]).then(([symbolData, decimalsData]) => {
          const symbol = decodeTokenSymbol(symbolData);
          const decimals = decodeTokenDecimals(decimalsData);
          if (symbol === undefined || decimals === undefined)
            throw new Error(`chain ${chainId}: token ${key}: symbol() or decimals() answer is not an ERC-20's`);
          return { symbol, decimals };
        });
        tokens.set(key, meta);
      }
      return meta;
    },
    // Not through ethers: its pure-JS UTF-8 decoding of a struct-log trace (megabytes) takes a
    // minute where fetch and JSON.parse take a second.
    send: (method, params) => retried(method, () => rawRequest(rpcUrl, method, params, maxAnswerBytes)),
    close: () => provider.destroy(),
  };
}
