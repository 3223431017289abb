/**
 * The blocks of a time range: from the first block at or after `from` to the last block before
 * `to` (Unix seconds, `to` exclusive), by binary search on block timestamps (which never decrease).
 */
import type { ChainReader } from '../chain/chain-reader';

export interface BlockRange {
  fromBlock: number;
  /** Below fromBlock when the range holds no block. */
  toBlock: number;
  /**
   * Whether the node has a block at or after `to`. Until it has, the period is not over on this
   * node (it is still being produced, or the node lags): later blocks may hold swaps of the period.
   */
  ended: boolean;
}

/** The first block whose timestamp is >= `seconds`, or latest + 1 when there is none yet. */
async function firstBlockAtOrAfter(reader: ChainReader, seconds: number, latest: number): Promise<number> {
  let lo = 0;
  let hi = latest + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if ((await reader.blockTime(mid)) >= seconds) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export async function blockRangeForTime(
  reader: ChainReader,
  fromSeconds: number,
  toSeconds: number,
): Promise<BlockRange> {
  const latest = await reader.latestBlock();
  const fromBlock = await firstBlockAtOrAfter(reader, fromSeconds, latest);
  const after = await firstBlockAtOrAfter(reader, toSeconds, latest);
  return { fromBlock, toBlock: after - 1, ended: after <= latest };
}
