/**
 * Reads a chain's pair registry from its helper contract at one block: the quote token,
 * the listed tokens minus the quote token, and each token's `decimals()` and `symbol()`
 * from the token contract itself (decimals are never assumed: USDT has 18 on chain 56).
 * Two round trips (addresses, then metadata), each one batch pinned to the same block (by hash).
 * A token is left out when its decimals are outside the range the service prices
 * (@pmm/protocol's isTokenDecimals) or differ from the decimals the chains file pins for it.
 */
import { getAddress } from 'ethers';
import {
  DECIMALS_CALLDATA,
  SYMBOL_CALLDATA,
  decodeTokenDecimals,
  decodeTokenSymbol,
  type Logger,
  blockHashRef,
  type RpcTransport,
} from '@pmm/core';
import { isTokenDecimals, type PairRegistry, type TokenInfo } from '@pmm/protocol';
import { executeCalls } from './call-batch';
import type { CallResult } from './call-codec';
import { helperInterface } from './contract-abis';

export interface RegistryReadOptions {
  chainId: number;
  helper: string;
  multicall3?: string;
  block: { number: number; hash: string };
  /** Decimals the chains file pins, by checksummed address. */
  pinnedDecimals?: Readonly<Record<string, number>>;
  timeoutMs: number;
  logger: Logger;
  /** Unix ms of the refresh (injectable for tests). */
  now?: () => number;
}

function decodeResult(iface: typeof helperInterface, fn: string, r: CallResult | undefined): unknown[] {
  if (!r?.success) throw new Error(`${fn}() failed`);
  return [...iface.decodeFunctionResult(fn, r.data)];
}

/**
 * The registry at `blockNumber`. A listed token whose metadata cannot be read is left out
 * (with a warning) rather than failing the whole chain; the quote token is required.
 *
 * @throws when the helper or the quote token cannot be read
 */
export async function readPairRegistry(rpc: RpcTransport, opts: RegistryReadOptions): Promise<PairRegistry> {
  const batch = { block: blockHashRef(opts.block.hash), multicall3: opts.multicall3, timeoutMs: opts.timeoutMs };
  const first = await executeCalls(
    rpc,
    [
      { target: opts.helper, data: helperInterface.encodeFunctionData('getQuoteToken') },
      { target: opts.helper, data: helperInterface.encodeFunctionData('getListedTokens') },
    ],
    batch,
  );
  const quoteAddress = getAddress(String(decodeResult(helperInterface, 'getQuoteToken', first.results[0])[0]));
  const listed = decodeResult(helperInterface, 'getListedTokens', first.results[1])[0] as readonly string[];
  const seen = new Set<string>([quoteAddress]);
  const bases: string[] = [];
  for (const raw of listed) {
    const a = getAddress(raw);
    if (!seen.has(a)) {
      seen.add(a);
      bases.push(a);
    }
  }

  const tokens = [quoteAddress, ...bases];
  const meta = await executeCalls(
    rpc,
    tokens.flatMap((t) => [
      { target: t, data: DECIMALS_CALLDATA },
      { target: t, data: SYMBOL_CALLDATA },
    ]),
    batch,
  );
  /** The token's metadata, or why it cannot be tracked. */
  const tokenInfo = (address: string, i: number): TokenInfo | string => {
    const [decimalsResult, symbolResult] = [meta.results[2 * i], meta.results[2 * i + 1]];
    const decimals = decimalsResult?.success ? decodeTokenDecimals(decimalsResult.data) : undefined;
    const symbol = symbolResult?.success ? decodeTokenSymbol(symbolResult.data) : undefined;
    if (decimals === undefined || symbol === undefined) return 'decimals() or symbol() failed';
    if (!isTokenDecimals(decimals)) return `decimals() = ${decimals} is out of range`;
    const pinned = opts.pinnedDecimals?.[address];
    if (pinned !== undefined && pinned !== decimals) return `decimals() = ${decimals}, the chains file pins ${pinned}`;
    return { address, symbol, decimals };
  };
  const [quoteToken, ...baseInfos] = tokens.map(tokenInfo);
  if (typeof quoteToken !== 'object') throw new Error(`quote token ${quoteAddress}: ${quoteToken ?? 'unreadable'}`);
  const baseTokens: TokenInfo[] = [];
  baseInfos.forEach((info, i) => {
    if (typeof info === 'object') baseTokens.push(info);
    else opts.logger.warn('token left out of the registry', { token: bases[i], reason: info });
  });
  return {
    chainId: opts.chainId,
    quoteToken,
    baseTokens,
    blockNumber: opts.block.number,
    refreshedAt: (opts.now ?? Date.now)(),
  };
}
