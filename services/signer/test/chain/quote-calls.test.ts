/**
 * The grouping of firm quotes' node calls (chain/quote-calls.ts), with a fake transport: pure
 * logic only (which quotes share a flight, which go in one round trip, what is kept for a block,
 * what is not sent for lack of time). That the answers are the router's own, exact for their
 * block, is proven on the devnet (firm-quote-batches.devnet.test.ts) and against a hostile node
 * (firm-quotes.test.ts).
 */
import { Interface } from 'ethers';
import { Multicall3Artifact } from '@pmm/contracts';
import { RpcError, RpcTimeoutError, type RpcOutcome, type RpcRequest, type RpcTransport } from '@pmm/core';
import { AGGREGATE3_SELECTOR, functionSelector, uint256WordHex, type CallResult } from '@pmm/protocol';
import { createQuoteCalls, NodeGarbage, NoTimeLeft, type QuoteCallKey } from '../../src/chain/quote-calls';

const multicall = new Interface(Multicall3Artifact.abi);
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
const ROUTER = `0x${'c3'.repeat(20)}`;
const BLOCK = `0x${'aa'.repeat(32)}`;
const OTHER_BLOCK = `0x${'bb'.repeat(32)}`;
const TOKEN_IN = `0x${'a1'.repeat(20)}`;
const TOKEN_OUT = `0x${'b2'.repeat(20)}`;
/** The router's revert of an amount past the curve's depth: `DepthExceeded()`. */
const DEPTH_EXCEEDED = functionSelector('DepthExceeded()');
/** A uint256 word, `0x`-prefixed. */
const hexWord = (n: bigint | number) => `0x${uint256WordHex(n)}`;

/** The fake router's answer to a quote of `amountIn`: twice the amount (calldata is the amount itself here). */
const answerOf = (data: string): CallResult =>
  BigInt(data) >= 1_000_000n
    ? { success: false, data: DEPTH_EXCEEDED }
    : { success: true, data: hexWord(BigInt(data) * 2n) };

interface Sent {
  method: string;
  params: readonly unknown[];
  timeoutMs: number;
  /** The calls inside it, in order (decoded from aggregate3, or the JSON-RPC batch's). */
  calls: string[];
}

/** A node that answers each round trip when the test says (`answer`), or at once (`auto`). */
function fakeNode(opts: { auto?: boolean } = {}) {
  const sent: Sent[] = [];
  const pending: { sent: Sent; resolve(v: unknown): void; reject(e: unknown): void }[] = [];
  const aggregate = (calls: string[]) =>
    multicall.encodeFunctionResult('aggregate3', [calls.map((c) => answerOf(c)).map((r) => [r.success, r.data])]);
  const honest = (s: Sent): unknown => {
    if (s.method === 'batch') return s.calls.map((c): RpcOutcome => ({ ok: true, result: answerOf(c).data }));
    const { to } = s.params[0] as { to: string };
    if (to === MULTICALL3) return aggregate(s.calls);
    const r = answerOf(s.calls[0]!);
    if (!r.success) throw new RpcError('execution reverted', 3, r.data);
    return r.data;
  };
  const hold = (s: Sent) =>
    new Promise<unknown>((resolve, reject) => {
      sent.push(s);
      if (opts.auto) {
        try {
          resolve(honest(s));
        } catch (err) {
          reject(err);
        }
      } else pending.push({ sent: s, resolve, reject });
    });
  const rpc: RpcTransport = {
    kind: 'http',
    request: (method, params, timeoutMs) => {
      const { to, data } = params[0] as { to: string; data: string };
      const calls =
        to === MULTICALL3
          ? (multicall.decodeFunctionData('aggregate3', data)[0] as { callData: string }[]).map((c) => c.callData)
          : [data];
      return hold({ method, params, timeoutMs, calls });
    },
    batch: (requests: readonly RpcRequest[], timeoutMs) =>
      hold({
        method: 'batch',
        params: requests,
        timeoutMs,
        calls: requests.map((r) => (r.params[0] as { data: string }).data),
      }) as Promise<RpcOutcome[]>,
    close: () => undefined,
  };
  return {
    rpc,
    sent,
    /** Answers the oldest round trip still open: honestly, or with `raw`, or fails it with `err`. */
    answer(how: { raw?: unknown; err?: unknown } = {}) {
      const p = pending.shift()!;
      if (how.err) p.reject(how.err);
      else if ('raw' in how) p.resolve(how.raw);
      else {
        try {
          p.resolve(honest(p.sent));
        } catch (err) {
          p.reject(err);
        }
      }
    },
    open: () => pending.length,
  };
}

const keep = (r: CallResult) => (r.success ? r.data.length === 66 : r.data === DEPTH_EXCEEDED);
const key = (amountIn: bigint, blockHash = BLOCK): QuoteCallKey => ({
  blockHash,
  tokenIn: TOKEN_IN,
  tokenOut: TOKEN_OUT,
  amountIn,
});
/** The calldata of a quote here is its amount, as a word: the fake router reads it back. */
const calldataOf = (amountIn: bigint) => () => hexWord(amountIn);
/** Until the calls of this turn are sent (their calldata's microtasks, then quote-calls' setImmediate). */
const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};
const FAR = Date.now() + 60_000;

describe('quote calls: one flight per quote and block', () => {
  it('behavior: 100 identical quotes at once make one node call; every request gets its answer', async () => {
    const node = fakeNode();
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    let asked = 0;
    const answers = Array.from({ length: 100 }, () =>
      calls.call(key(21n), FAR, () => {
        asked++;
        return hexWord(21n);
      }),
    );
    await settle();
    expect(node.sent).toHaveLength(1);
    expect(node.sent[0]!.calls).toHaveLength(1);
    // The calldata was made once, by the request that started the flight.
    expect(asked).toBe(1);
    node.answer();
    for (const a of await Promise.all(answers)) expect(a).toEqual({ success: true, data: hexWord(42n) });
  });

  it("behavior: the router's answer is kept for its block: asked again later, no node call; another block asks again", async () => {
    const node = fakeNode({ auto: true });
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    const first = await calls.call(key(5n), FAR, calldataOf(5n));
    const past = await calls.call(key(2_000_000n), FAR, calldataOf(2_000_000n));
    expect(node.sent).toHaveLength(2);
    expect(await calls.call(key(5n), FAR, calldataOf(5n))).toEqual(first);
    // A revert for the amount is the router's answer for the block too.
    expect(await calls.call(key(2_000_000n), FAR, calldataOf(2_000_000n))).toEqual(past);
    expect(node.sent).toHaveLength(2);
    await calls.call(key(5n, OTHER_BLOCK), FAR, calldataOf(5n));
    expect(node.sent).toHaveLength(3);
  });

  it('error: a failure is shared by its flight and forgotten with it: the next request asks the node again', async () => {
    const node = fakeNode();
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    const flight = Array.from({ length: 10 }, () => calls.call(key(7n), FAR, calldataOf(7n)).catch((e: unknown) => e));
    await settle();
    const failure = new RpcError('header not found', -32000);
    node.answer({ err: failure });
    for (const e of await Promise.all(flight)) expect(e).toBe(failure);
    const again = calls.call(key(7n), FAR, calldataOf(7n));
    await settle();
    expect(node.sent).toHaveLength(2);
    node.answer();
    expect(await again).toEqual({ success: true, data: hexWord(14n) });
  });

  it("error: an answer that is not the router's (a call that failed without revert data) is not kept", async () => {
    const node = fakeNode();
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    const first = calls.call(key(9n), FAR, calldataOf(9n));
    await settle();
    node.answer({ raw: multicall.encodeFunctionResult('aggregate3', [[[false, '0x']]]) });
    expect(await first).toEqual({ success: false, data: '0x' });
    const again = calls.call(key(9n), FAR, calldataOf(9n));
    await settle();
    expect(node.sent).toHaveLength(2);
    node.answer();
    await again;
  });

  it('error: the calldata that cannot be made (the quoter key failed) fails the flight, and is not kept', async () => {
    const node = fakeNode({ auto: true });
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    const down = new Error('module down');
    const refused = calls.call(key(3n), FAR, () => Promise.reject(down));
    const joined = calls.call(key(3n), FAR, calldataOf(3n));
    await expect(refused).rejects.toBe(down);
    await expect(joined).rejects.toBe(down);
    expect(node.sent).toHaveLength(0);
    expect(await calls.call(key(3n), FAR, calldataOf(3n))).toEqual({ success: true, data: hexWord(6n) });
  });
});

describe('quote calls: one round trip per burst', () => {
  it('behavior: 20 distinct quotes of a block at once: one aggregate3 eth_call at that block, each its own answer', async () => {
    const node = fakeNode();
    const trips: [number, number][] = [];
    const calls = createQuoteCalls({
      rpc: node.rpc,
      router: ROUTER,
      multicall3: MULTICALL3,
      keep,
      onRoundTrip: (quotes, ethCalls) => trips.push([quotes, ethCalls]),
    });
    const amounts = Array.from({ length: 20 }, (_, i) => BigInt(i + 1) * 1_000n);
    // A past-depth amount among them: its revert is its own.
    amounts[7] = 5_000_000n;
    const answers = amounts.map((a) => calls.call(key(a), FAR, calldataOf(a)));
    await settle();
    expect(node.sent).toHaveLength(1);
    const [sent] = node.sent;
    expect(sent!.method).toBe('eth_call');
    expect(sent!.params[0]).toMatchObject({ to: MULTICALL3 });
    expect((sent!.params[0] as { data: string }).data.slice(2, 10)).toBe(AGGREGATE3_SELECTOR);
    expect(sent!.params[1]).toEqual({ blockHash: BLOCK, requireCanonical: true });
    // Every call is the router's, allowFailure on.
    const decoded = multicall.decodeFunctionData('aggregate3', (sent!.params[0] as { data: string }).data)[0] as {
      target: string;
      allowFailure: boolean;
    }[];
    expect(decoded.every((c) => c.target.toLowerCase() === ROUTER && c.allowFailure)).toBe(true);
    expect(sent!.calls).toEqual(amounts.map((a) => hexWord(a)));
    node.answer();
    const results = await Promise.all(answers);
    expect(results).toEqual(amounts.map((a) => answerOf(hexWord(a))));
    expect(results[7]).toEqual({ success: false, data: DEPTH_EXCEEDED });
    expect(trips).toEqual([[20, 1]]);
  });

  it('behavior: more than maxBatch at once go in round trips of maxBatch; two blocks never share one', async () => {
    const node = fakeNode({ auto: true });
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep, maxBatch: 8 });
    const amounts = Array.from({ length: 20 }, (_, i) => BigInt(i + 1));
    await Promise.all([
      ...amounts.map((a) => calls.call(key(a), FAR, calldataOf(a))),
      calls.call(key(1n, OTHER_BLOCK), FAR, calldataOf(1n)),
    ]);
    expect(node.sent.map((s) => [s.calls.length, (s.params[1] as { blockHash: string }).blockHash])).toEqual([
      [8, BLOCK],
      [8, BLOCK],
      [4, BLOCK],
      [1, OTHER_BLOCK],
    ]);
  });

  it('behavior: quotes that arrive a turn apart go in round trips of their own (no waiting for company)', async () => {
    const node = fakeNode({ auto: true });
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    await calls.call(key(1n), FAR, calldataOf(1n));
    await calls.call(key(2n), FAR, calldataOf(2n));
    expect(node.sent.map((s) => s.calls.length)).toEqual([1, 1]);
  });

  it('behavior: without Multicall3, one eth_call to the router alone, or one JSON-RPC batch for a burst', async () => {
    const node = fakeNode({ auto: true });
    const trips: [number, number][] = [];
    const calls = createQuoteCalls({
      rpc: node.rpc,
      router: ROUTER,
      keep,
      onRoundTrip: (quotes, ethCalls) => trips.push([quotes, ethCalls]),
    });
    expect(await calls.call(key(4n), FAR, calldataOf(4n))).toEqual(answerOf(hexWord(4n)));
    // A revert of the lone eth_call is the router's answer (its revert data).
    expect(await calls.call(key(3_000_000n), FAR, calldataOf(3_000_000n))).toEqual({
      success: false,
      data: DEPTH_EXCEEDED,
    });
    const burst = await Promise.all([5n, 6n, 7n].map((a) => calls.call(key(a), FAR, calldataOf(a))));
    expect(burst).toEqual([5n, 6n, 7n].map((a) => answerOf(hexWord(a))));
    expect(node.sent.map((s) => [s.method, (s.params[0] as { to?: string }).to])).toEqual([
      ['eth_call', ROUTER],
      ['eth_call', ROUTER],
      ['batch', undefined],
    ]);
    expect(trips).toEqual([
      [1, 1],
      [1, 1],
      [3, 3],
    ]);
  });
});

describe('quote calls: a hostile answer fails the whole round trip', () => {
  const five = [1n, 2n, 3n, 4n, 5n];
  const word = (n: number) => uint256WordHex(n);
  it.each([
    ['not hex', 'garbage'],
    ['not a string', { results: [] }],
    [
      'one result fewer than the calls',
      multicall.encodeFunctionResult('aggregate3', [five.slice(1).map(() => [true, hexWord(1)])]),
    ],
    ['one result more', multicall.encodeFunctionResult('aggregate3', [[...five, 6n].map(() => [true, hexWord(1)])])],
    ['truncated', multicall.encodeFunctionResult('aggregate3', [five.map(() => [true, hexWord(1)])]).slice(0, 400)],
    [
      'a success word that is no bool',
      // Five well-formed results, the first one's success word 2: after the array's offset and
      // length and the five offsets, the first tuple's head.
      ((encoded: string) => encoded.slice(0, 2 + 7 * 64) + word(2) + encoded.slice(2 + 8 * 64))(
        multicall.encodeFunctionResult('aggregate3', [five.map(() => [true, hexWord(1)])]),
      ),
    ],
    ['an offset past the end', `0x${word(0x20)}${word(5)}${word(0xffffff)}`],
    ['empty', '0x'],
  ])('error: %s: every call of the batch fails (NodeGarbage), none gets an amount', async (_label, raw) => {
    const node = fakeNode();
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep });
    const answers = five.map((a) => calls.call(key(a), FAR, calldataOf(a)).catch((e: unknown) => e));
    await settle();
    node.answer({ raw });
    for (const e of await Promise.all(answers)) expect(e).toBeInstanceOf(NodeGarbage);
  });

  it('error: a JSON-RPC batch with an answer that is not hex fails every call of it', async () => {
    const node = fakeNode();
    const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, keep });
    const answers = five.map((a) => calls.call(key(a), FAR, calldataOf(a)).catch((e: unknown) => e));
    await settle();
    node.answer({ raw: five.map((_, i): RpcOutcome => ({ ok: true, result: i === 2 ? { amount: 1 } : hexWord(1) })) });
    for (const e of await Promise.all(answers)) expect(e).toBeInstanceOf(NodeGarbage);
  });
});

/**
 * Quote calls on a fake clock (`clock.now`), against a node answered by hand; `roundTrip(amount,
 * ms)` makes one quote whose round trip takes `ms`.
 */
function onClock() {
  const clock = { now: 1_000 };
  const node = fakeNode();
  const calls = createQuoteCalls({ rpc: node.rpc, router: ROUTER, multicall3: MULTICALL3, keep, now: () => clock.now });
  const roundTrip = async (amount: bigint, ms: number) => {
    const p = calls.call(key(amount), clock.now + 1_000, calldataOf(amount));
    await settle();
    clock.now += ms;
    node.answer();
    return p;
  };
  return { clock, node, calls, roundTrip };
}

describe('quote calls: no call that cannot end in time', () => {
  it('behavior: a round trip is given what is left of the latest deadline among its calls', async () => {
    const { clock, node, calls } = onClock();
    const a = calls.call(key(1n), clock.now + 100, calldataOf(1n));
    // Joins the flight before it is sent: the flight waits for the later deadline.
    const b = calls.call(key(1n), clock.now + 300, calldataOf(1n));
    const c = calls.call(key(2n), clock.now + 200, calldataOf(2n));
    await settle();
    expect(node.sent.map((s) => s.timeoutMs)).toEqual([300]);
    node.answer();
    await Promise.all([a, b, c]);
  });

  it("error: less time left than the node's fastest recent round trip: not sent, NoTimeLeft at once", async () => {
    const { clock, node, calls, roundTrip } = onClock();
    // Three answered round trips of 10, 12 and 30 ms: the fastest is 10 ms.
    await roundTrip(1n, 10);
    await roundTrip(2n, 12);
    await roundTrip(3n, 30);
    expect(calls.expectedRoundTripMs()).toBe(10);
    const sent = node.sent.length;
    const tooLate = calls.call(key(4n), clock.now + 10, calldataOf(4n));
    const inTime = calls.call(key(5n), clock.now + 11, calldataOf(5n));
    await expect(tooLate).rejects.toBeInstanceOf(NoTimeLeft);
    await expect(tooLate).rejects.toThrow(
      "the node's round trip (10 ms at the fastest of late) would end after the deadline",
    );
    await settle();
    // Only the one that can still make it was sent.
    expect(node.sent.slice(sent).map((s) => s.calls)).toEqual([[hexWord(5n)]]);
    node.answer();
    await inTime;
    // Not kept: asked again with time, it is sent.
    await roundTrip(4n, 10);
    expect(node.sent.length).toBe(sent + 2);
  });

  it('behavior: round trips older than the window no longer count (a node that was slow is asked again)', async () => {
    const { clock, node, calls, roundTrip } = onClock();
    for (const amount of [1n, 2n, 3n]) await roundTrip(amount, 400);
    expect(calls.expectedRoundTripMs()).toBe(400);
    clock.now += 10_000;
    expect(calls.expectedRoundTripMs()).toBe(0);
    const p = calls.call(key(4n), clock.now + 100, calldataOf(4n));
    await settle();
    expect(node.open()).toBe(1);
    node.answer();
    await p;
  });

  it('error: a deadline already passed is never sent; a timeout of the round trip fails its flight and is not kept', async () => {
    const { clock, node, calls, roundTrip } = onClock();
    await expect(calls.call(key(1n), clock.now, calldataOf(1n))).rejects.toBeInstanceOf(NoTimeLeft);
    expect(node.sent).toHaveLength(0);
    const p = calls.call(key(1n), clock.now + 50, calldataOf(1n));
    await settle();
    clock.now += 50;
    node.answer({ err: new RpcTimeoutError('eth_call', 50) });
    await expect(p).rejects.toBeInstanceOf(RpcTimeoutError);
    await roundTrip(1n, 5);
    expect(node.sent).toHaveLength(2);
  });
});
