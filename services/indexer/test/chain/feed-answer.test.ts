/**
 * The feed's two answers read strictly (chain/feed-answer.ts), checked against viem's ABI codec
 * (an independent implementation): the shape AggregatorV3Interface answers, and nothing else.
 */
import { MockV3AggregatorArtifact } from '@pmm/contracts';
import { encodeFunctionData, encodeFunctionResult, type Abi } from 'viem';
import { decodeFeedAnswer, FEED_DECIMALS_CALLDATA, LATEST_ROUND_DATA_CALLDATA } from '../../src/chain/feed-answer';

const abi = MockV3AggregatorArtifact.abi as Abi;
const latest = (roundId: bigint, answer: bigint, updatedAt: bigint, answeredInRound = roundId) => ({
  success: true,
  data: encodeFunctionResult({
    abi,
    functionName: 'latestRoundData',
    result: [roundId, answer, updatedAt, updatedAt, answeredInRound],
  }),
});
const decimals = (d: number) => ({
  success: true,
  data: encodeFunctionResult({ abi, functionName: 'decimals', result: d }),
});

describe('feed answer', () => {
  it("behavior: the calldata is the interface's (latestRoundData(), decimals())", () => {
    expect(LATEST_ROUND_DATA_CALLDATA).toBe(encodeFunctionData({ abi, functionName: 'latestRoundData' }));
    expect(FEED_DECIMALS_CALLDATA).toBe(encodeFunctionData({ abi, functionName: 'decimals' }));
  });

  it("behavior: a round, a signed answer and its updatedAt, with the feed's decimals", () => {
    expect(decodeFeedAnswer(latest(7n, 3000_00000000n, 1_800_000_000n), decimals(8))).toEqual({
      roundId: 7n,
      answer: 3000_00000000n,
      updatedAt: 1_800_000_000,
      decimals: 8,
    });
    // A negative answer is read as it is: the band refuses it (not this codec).
    expect(decodeFeedAnswer(latest(7n, -5n, 1n), decimals(8))?.answer).toBe(-5n);
  });

  it('error: a revert, another shape, a round id past a uint80, decimals past 36 or an updatedAt past a safe integer is no answer', () => {
    const ok = latest(7n, 1n, 1n);
    expect(decodeFeedAnswer({ success: false, data: ok.data }, decimals(8))).toBeUndefined();
    expect(decodeFeedAnswer(ok, { success: false, data: '0x' })).toBeUndefined();
    expect(decodeFeedAnswer({ success: true, data: '0x' }, decimals(8))).toBeUndefined(); // an address with no code
    expect(decodeFeedAnswer({ success: true, data: ok.data + '00'.repeat(32) }, decimals(8))).toBeUndefined();
    expect(decodeFeedAnswer({ success: true, data: ok.data.slice(0, -64) }, decimals(8))).toBeUndefined();
    expect(decodeFeedAnswer({ success: true, data: ok.data.replace(/.$/, 'z') }, decimals(8))).toBeUndefined();
    const wide = '0x' + '00'.repeat(21) + 'ff'.repeat(11) + ok.data.slice(66);
    expect(decodeFeedAnswer({ success: true, data: wide }, decimals(8))).toBeUndefined();
    expect(decodeFeedAnswer(ok, decimals(37))).toBeUndefined();
    expect(decodeFeedAnswer(latest(7n, 1n, 2n ** 60n), decimals(8))).toBeUndefined();
  });
});
