/**
 * The router's revert data, decoded (protocol's router-revert.ts) against revert data encoded by
 * another library (viem) from the compiled contracts' ABIs: every error the router's `swap` path
 * can raise, the token errors that reach it, Solidity's Error(string) and Panic; what cannot be
 * read is Unknown, never a throw. And the callTracer frame of a reverted router call keeps its
 * own error and revert data, which its caller's failure alone does not give.
 */
import { PmmRouterArtifact, TestTokenArtifact } from '@pmm/contracts';
import { decodeRouterRevert, SWAP_SELECTOR } from '@pmm/protocol';
import { encodeErrorResult, parseAbi, type Abi } from 'viem';
import { swapCallsFromCallTracer } from '../src/chain/call-trace';

const router = PmmRouterArtifact.abi as Abi;
const token = TestTokenArtifact.abi as Abi;
const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';

/** Errors of the router that its `swap` never raises (owner-only and on-chain quote paths). */
const NOT_ON_THE_SWAP_PATH = ['NotOwner', 'InvalidCurve', 'NotQuoter', 'QuoteTimestampOutOfRange'];

describe('decodeRouterRevert', () => {
  it('behavior: every error of the router on the swap path, by name with its arguments', () => {
    const errors = router.filter((e) => e.type === 'error') as unknown as {
      name: string;
      inputs: { type: string }[];
    }[];
    expect(errors.length).toBeGreaterThan(10);
    for (const e of errors) {
      const args = e.inputs.map((i, k) => (i.type === 'address' ? (k ? B : A) : BigInt(1_000 + k)));
      const data = encodeErrorResult({ abi: router, errorName: e.name, args });
      const decoded = decodeRouterRevert(data);
      if (NOT_ON_THE_SWAP_PATH.includes(e.name)) {
        expect(decoded.reason).toBe('Unknown');
        continue;
      }
      expect(decoded.reason).toBe(e.name);
      expect(Object.values(decoded.args)).toEqual(args.map(String));
    }
  });

  it('behavior: the named arguments of the reasons the ledger reports', () => {
    const encode = (errorName: string, args: unknown[]) =>
      decodeRouterRevert(encodeErrorResult({ abi: router, errorName, args }));
    expect(encode('QuoteExpired', [100n, 161n])).toEqual({
      reason: 'QuoteExpired',
      args: { quoteTimestamp: '100', blockTimestamp: '161' },
    });
    expect(encode('InsufficientOutput', [5n, 6n]).args).toEqual({ amountOut: '5', minOutAmount: '6' });
    expect(encode('InsufficientReserve', [7n, 3n]).args).toEqual({ amountOut: '7', reserve: '3' });
    expect(encode('WrongSender', [A, B]).args).toEqual({ sender: A, userAddress: B });
    expect(encode('InvalidSignature', [])).toEqual({ reason: 'InvalidSignature', args: {} });
  });

  it('behavior: token errors that bubble up through the router, Error(string) and Panic', () => {
    expect(
      decodeRouterRevert(encodeErrorResult({ abi: token, errorName: 'InsufficientAllowance', args: [A, 1n, 2n] })),
    ).toEqual({ reason: 'InsufficientAllowance', args: { spender: A, allowance: '1', needed: '2' } });
    const oz = parseAbi(['error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)']);
    expect(
      decodeRouterRevert(encodeErrorResult({ abi: oz, errorName: 'ERC20InsufficientBalance', args: [A, 0n, 9n] }))
        .reason,
    ).toBe('ERC20InsufficientBalance');
    const std = parseAbi(['error Error(string)', 'error Panic(uint256)']);
    expect(decodeRouterRevert(encodeErrorResult({ abi: std, errorName: 'Error', args: ['too late'] }))).toEqual({
      reason: 'Error',
      args: { message: 'too late' },
    });
    expect(decodeRouterRevert(encodeErrorResult({ abi: std, errorName: 'Panic', args: [0x11n] }))).toEqual({
      reason: 'Panic',
      args: { code: '17' },
    });
  });

  it('robustness: no data, short, truncated, unknown or malformed data is read, never thrown on', () => {
    expect(decodeRouterRevert('0x')).toEqual({ reason: 'NoData', args: {} });
    expect(decodeRouterRevert('0x1234').reason).toBe('Unknown');
    expect(decodeRouterRevert('0xdeadbeef')).toEqual({ reason: 'Unknown', args: { selector: '0xdeadbeef' } });
    const expired = encodeErrorResult({ abi: router, errorName: 'QuoteExpired', args: [1n, 2n] });
    expect(decodeRouterRevert(expired.slice(0, 10 + 64)).reason).toBe('Unknown');
    expect(decodeRouterRevert('not hex').reason).toBe('Unknown');
    // Error(string) whose length points past the data.
    const std = parseAbi(['error Error(string)']);
    const message = encodeErrorResult({ abi: std, errorName: 'Error', args: ['x'] });
    const lying = message.slice(0, 10 + 64) + 'f'.repeat(64) + message.slice(10 + 128);
    expect(decodeRouterRevert(lying).reason).toBe('Unknown');
  });
});

describe("the callTracer's reverted router calls", () => {
  const ROUTER = '0x00000000000000000000000000000000000000cc';
  const input = `${SWAP_SELECTOR}${'00'.repeat(32)}`;
  const expired = encodeErrorResult({ abi: router, errorName: 'QuoteExpired', args: [1n, 2n] });

  it('behavior: a call that failed keeps its own error and revert data; one undone by its caller has no error', () => {
    const calls = swapCallsFromCallTracer(
      {
        type: 'CALL',
        from: A,
        to: B,
        error: 'execution reverted',
        output: expired,
        calls: [
          { type: 'CALL', from: B, to: ROUTER, input, output: '0x' + '00'.repeat(31) + '05' },
          { type: 'CALL', from: B, to: ROUTER, input, error: 'execution reverted', output: expired },
        ],
      },
      ROUTER,
    );
    expect(calls.map((c) => [c.reverted, c.error, c.output === expired])).toEqual([
      [true, undefined, false],
      [true, 'execution reverted', true],
    ]);
  });
});
