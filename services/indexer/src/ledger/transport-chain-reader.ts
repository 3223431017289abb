/**
 * The operator package's ChainReader (what scan-swaps.ts and the tracers read) over the indexer's own
 * node connection (@pmm/core's json-rpc.ts), so that the ledger obeys the indexer's rules against a
 * hostile node: every answer bounded by MAX_RPC_ANSWER_BYTES, every request by RPC_TIMEOUT_MS.
 * Nothing is retried here: a block that fails is read again whole (ledger-follower.ts).
 */
import {
  DECIMALS_CALLDATA,
  RpcError,
  SYMBOL_CALLDATA,
  decodeTokenDecimals,
  decodeTokenSymbol,
  hexToNumber,
  isRpcObject,
  numberToHex,
  type RpcTransport,
} from '@pmm/core';
import { id } from 'ethers';
import type { ChainReader, ChainTransaction, TokenMeta, TransferLog } from '@pmm/operator';

const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');
/** `getQuoteToken()` of the router's helper. */
const GET_QUOTE_TOKEN = id('getQuoteToken()').slice(0, 10);

const lower = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new RpcError(`${what}: not a string`, -32603);
  return v.toLowerCase();
};

export function transportChainReader(rpc: RpcTransport, chainId: number, timeoutMs: number): ChainReader {
  const calls = new Map<string, number>();
  const tokens = new Map<string, Promise<TokenMeta>>();
  // Block times: from the logs when the node puts them there (anvil, geth ≥ 1.14, reth), else
  // read once per block. The ledger reads one block at a time: the map holds a few entries.
  const times = new Map<number, number>();
  const send = async (method: string, params: unknown[]): Promise<unknown> => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    try {
      return await rpc.request(method, params, timeoutMs);
    } catch (err) {
      // The shape the operator package's chain reader expects (the node's own code and message).
      if (err instanceof RpcError)
        throw Object.assign(new Error(`${method}: ${err.message}`), {
          error: { code: err.code, message: err.message },
        });
      throw err;
    }
  };
  const ethCall = (to: string, data: string) => send('eth_call', [{ to, data }, 'latest']) as Promise<string>;
  return {
    chainId,
    calls,
    latestBlock: async () => hexToNumber(await send('eth_blockNumber', []), 'block number'),
    async blockTime(blockNumber) {
      const known = times.get(blockNumber);
      if (known !== undefined) return known;
      const block = await send('eth_getBlockByNumber', [numberToHex(blockNumber), false]);
      if (!isRpcObject(block)) throw new Error(`chain ${chainId}: block ${blockNumber} not found`);
      return hexToNumber(block.timestamp, 'block timestamp');
    },
    async transfers(address, side, fromBlock, toBlock) {
      const who = '0x' + address.toLowerCase().slice(2).padStart(64, '0');
      const topics = side === 'from' ? [TRANSFER_TOPIC, who] : [TRANSFER_TOPIC, null, who];
      const logs = await send('eth_getLogs', [
        { topics, fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) },
      ]);
      if (!Array.isArray(logs)) throw new RpcError('eth_getLogs: not a list', -32603);
      const out: TransferLog[] = [];
      times.clear();
      for (const log of logs) {
        if (!isRpcObject(log) || !Array.isArray(log.topics)) continue;
        if (typeof log.blockTimestamp === 'string')
          times.set(
            hexToNumber(log.blockNumber, 'log blockNumber'),
            hexToNumber(log.blockTimestamp, 'log blockTimestamp'),
          );
        const t = log.topics as unknown[];
        // A non-standard event with the same topic (e.g. ERC-721's indexed tokenId) is not an amount.
        if (t.length !== 3 || typeof log.data !== 'string' || log.data.length !== 66) continue;
        out.push({
          txHash: lower(log.transactionHash, 'log transactionHash'),
          blockNumber: hexToNumber(log.blockNumber, 'log blockNumber'),
          logIndex: hexToNumber(log.logIndex, 'log logIndex'),
          token: lower(log.address, 'log address'),
          from: `0x${lower(t[1], 'log topic').slice(26)}`,
          to: `0x${lower(t[2], 'log topic').slice(26)}`,
          value: BigInt(log.data),
        });
      }
      return out;
    },
    async transaction(hash): Promise<ChainTransaction | undefined> {
      const tx = await send('eth_getTransactionByHash', [hash]);
      if (!isRpcObject(tx)) return undefined;
      return {
        hash: lower(tx.hash, 'transaction hash'),
        blockNumber: tx.blockNumber ? hexToNumber(tx.blockNumber, 'transaction block') : undefined,
        from: lower(tx.from, 'transaction from'),
        to: typeof tx.to === 'string' ? tx.to.toLowerCase() : undefined,
        input: lower(tx.input, 'transaction input'),
      };
    },
    async receiptStatus(hash) {
      const receipt = await send('eth_getTransactionReceipt', [hash]);
      return isRpcObject(receipt) ? hexToNumber(receipt.status, 'receipt status') : undefined;
    },
    async quoteToken(helperAddress) {
      const data = await ethCall(helperAddress, GET_QUOTE_TOKEN);
      return `0x${lower(data, 'getQuoteToken').slice(26, 66)}`;
    },
    token(address) {
      const key = address.toLowerCase();
      let meta = tokens.get(key);
      if (!meta) {
        meta = Promise.all([ethCall(key, SYMBOL_CALLDATA), ethCall(key, DECIMALS_CALLDATA)]).then(([s, d]) => {
          const symbol = decodeTokenSymbol(s);
          const decimals = decodeTokenDecimals(d);
          if (symbol === undefined || decimals === undefined)
            throw new Error(`chain ${chainId}: token ${key}: symbol() or decimals() answer is not an ERC-20's`);
          return { symbol, decimals };
        });
        // A failed read is tried again next time, not remembered.
        meta.catch(() => tokens.delete(key));
        tokens.set(key, meta);
      }
      return meta;
    },
    send,
    close: () => undefined,
  };
}
