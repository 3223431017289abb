/**
 * Reads a chain's pair registry from its helper contract at one block: the quote token,
 * the listed tokens minus the quote token, and each token's `decimals()` and `symbol()`
 * from the token contract itself (decimals are never assumed: USDT has 18 on chain 56).
 * Two round trips (addresses, then metadata), each one batch pinned to the same block.
 */
import { getAddress } from 'ethers';
import { DECIMALS_CALLDATA, SYMBOL_CALLDATA, decodeTokenDecimals, decodeTokenSymbol, type Logger } from '@pmm/core';
import type { PairRegistry, TokenInfo } from '@pmm/protocol';
import { executeCalls } from './call-batch';
import type { CallResult } from './call-codec';
import { helperInterface } from './contract-abis';
import type { RpcTransport } from './json-rpc';
import { numberToHex } from './json-rpc';

export interface RegistryReadOptions {
  chainId: number;
  helper: string;
  multicall3?: string;
  blockNumber: number;
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
  const blockTag = numberToHex(opts.blockNumber);
  const batch = { blockTag, multicall3: opts.multicall3, timeoutMs: opts.timeoutMs };
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
  const infos: (TokenInfo | undefined)[] = tokens.map((address, i) => {
    const [decimalsResult, symbolResult] = [meta.results[2 * i], meta.results[2 * i + 1]];
    const decimals = decimalsResult?.success ? decodeTokenDecimals(decimalsResult.data) : undefined;
    const symbol = symbolResult?.success ? decodeTokenSymbol(symbolResult.data) : undefined;
    return decimals === undefined || symbol === undefined ? undefined : { address, symbol, decimals };
  });
  const [quoteToken, ...baseInfos] = infos;
  if (!quoteToken) throw new Error(`quote token ${quoteAddress}: decimals() or symbol() failed`);
  const baseTokens: TokenInfo[] = [];
  baseInfos.forEach((info, i) => {
    if (info) baseTokens.push(info);
    else opts.logger.warn('token left out of the registry: decimals() or symbol() failed', { token: bases[i] });
  });
  return {
    chainId: opts.chainId,
    quoteToken,
    baseTokens,
    blockNumber: opts.blockNumber,
    refreshedAt: (opts.now ?? Date.now)(),
  };
}
