/**
 * POST /v2/swap/sign and /v1/swap/sign over HTTP (supertest), real Redis: every error code,
 * every precedence rule of docs/decisions/0001-error-precedence.md, the boundaries of issue 3, with envelopes pinned exactly.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import { decodeAbiParameters, decodeFunctionData, getAddress, parseAbi, type Hex } from 'viem';
import type { DigestSigner } from '@pmm/protocol';
import { createMetrics } from '@pmm/core';
import { createApp, type SignerDeps } from '../../src';
import {
  FIRM_ANSWER_FIELDS,
  FIRM_BLOCK,
  INTERNAL_TOKEN,
  NOW_S,
  OTHER_USER,
  USER,
  integrator,
  startFixture,
  testKey,
  testRegistry,
  type Fixture,
} from '../support/fixture';

const MAX_UINT256 = (1n << 256n) - 1n;
/** Each app declares its metrics on its own registry. */
const freshMetrics = () => createMetrics('signer-test', { defaultMetrics: false });
const SWAP_ABI = parseAbi([
  'function swap(address tokenIn, uint256 amountIn, address tokenOut, uint256 minOutAmount, uint256 quoteTimestamp, bytes verificationData)',
]);
const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;

const reg = testRegistry;
const WETH = (c: number) => reg(c).baseTokens[0]!.address;
const WBTC = (c: number) => reg(c).baseTokens[1]!.address;
const QUOTE = (c: number) => reg(c).quoteToken.address;
const USDC = QUOTE(8453);
const USDT = QUOTE(56);

let f: Fixture;

beforeAll(async () => {
  f = await startFixture({ originRates: { 8453: 777n } });
  await f.putIntegrator(integrator('limited', { chains: [8453] }));
  await f.putIntegrator(integrator('bsc-only', { chains: [56] }));
  await f.putIntegrator(integrator('override', { originRate: { '56': '12345' } }));
  await f.putIntegrator(integrator('off', { disabled: true }));
  await f.putIntegrator('{"id":"broken", not json', 'broken');
});

afterAll(async () => {
  await f.close();
});

interface PostOptions {
  path?: string;
  token?: string | null;
  integratorId?: string | null;
  requestId?: string;
  /** Raw body text instead of JSON.stringify(body). */
  raw?: string;
  contentType?: string;
  app?: Parameters<typeof request>[0];
}

let seq = 0;
function post(body: unknown, o: PostOptions = {}) {
  let r = request(o.app ?? f.app)
    .post(o.path ?? '/v2/swap/sign')
    .set('X-Request-Id', o.requestId ?? `rid-${++seq}`)
    .set('Content-Type', o.contentType ?? 'application/json');
  if (o.token !== null) r = r.set('X-Internal-Token', o.token ?? INTERNAL_TOKEN);
  if (o.integratorId !== null) r = r.set('X-Integrator-Id', o.integratorId ?? 'acme');
  return r.send(o.raw ?? JSON.stringify(body));
}

/** A valid WETH → USDC request on 8453, with overrides. */
const valid = (extra: Record<string, unknown> = {}) => ({
  tokenIn: WETH(8453),
  tokenOut: USDC,
  fee: '30',
  userAddress: USER,
  ...extra,
});

type Res = Awaited<ReturnType<typeof post>>;

/** Pins the whole envelope, and that the request id of the body is the one of the header. */
function expectError(res: Res, status: number, code: string, message: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { error: { code, message, requestId: res.headers['x-request-id'] } },
  });
  expect(res.headers['x-request-id']).toMatch(/^rid-\d+$|^[0-9a-f-]{36}$/);
}

function decodeVd(vd: string) {
  const [fee, originRate, userAddress, signature] = decodeAbiParameters(VD_TYPES, vd as Hex);
  return { fee, originRate, userAddress, signature };
}

function decodeCalldata(calldata: string) {
  const { functionName, args } = decodeFunctionData({ abi: SWAP_ABI, data: calldata as Hex });
  expect(functionName).toBe('swap');
  const [tokenIn, amountIn, tokenOut, minOutAmount, quoteTimestamp, verificationData] = args;
  return { tokenIn, amountIn, tokenOut, minOutAmount, quoteTimestamp, verificationData };
}

describe('success', () => {
  it('behavior: 200 with verificationData and timestamp in seconds, no calldata without amountIn', async () => {
    const res = await post(valid());
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['verificationData', 'timestamp', 'deadline']);
    expect(res.body.timestamp).toBe(NOW_S);
    expect(res.body.deadline).toBe(NOW_S + 60);
    expect(res.headers['cache-control']).toBe('no-store');
    const vd = decodeVd(res.body.verificationData);
    expect(vd).toMatchObject({ fee: 30n, originRate: 777n, userAddress: USER });
    expect(vd.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it('behavior: calldata present iff amountIn; minAmountOut defaults to 0', async () => {
    const res = await post(valid({ amountIn: '1000' }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIRM_ANSWER_FIELDS);
    // The fixture's firm source: gross 2 × 1000, less the 30 fee (0.03 %), rounded down.
    expect(res.body).toMatchObject({ amountOut: '1999', minAmountOut: '0', blockNumber: FIRM_BLOCK });
    expect(decodeCalldata(res.body.calldata)).toEqual({
      tokenIn: WETH(8453),
      amountIn: 1000n,
      tokenOut: USDC,
      minOutAmount: 0n,
      quoteTimestamp: BigInt(NOW_S),
      verificationData: res.body.verificationData,
    });
    const withMin = await post(valid({ amountIn: '1000', minAmountOut: '5' }));
    expect(decodeCalldata(withMin.body.calldata).minOutAmount).toBe(5n);
    expect(withMin.body.minAmountOut).toBe('5');
  });

  it('behavior: slippageBps sets the calldata minimum to floor(amountOut × (10000 − bps) / 10000)', async () => {
    for (const [slippageBps, min] of [
      [0, 1999n],
      [33, 1992n], // 1999 × 9967 / 10000 = 1992.4…
      [10_000, 0n],
    ] as const) {
      const res = await post(valid({ amountIn: '1000', slippageBps }));
      expect(res.status).toBe(200);
      expect(res.body.minAmountOut).toBe(String(min));
      expect(decodeCalldata(res.body.calldata).minOutAmount).toBe(min);
    }
  });

  it('error: slippageBps with minAmountOut, or without amountIn, is 422; on /v1 it is 400 UNSUPPORTED_FIELD', async () => {
    expectError(
      await post(valid({ amountIn: '1000', minAmountOut: '1', slippageBps: 5 })),
      422,
      'VALIDATION_ERROR',
      'slippageBps: not together with minAmountOut',
    );
    expectError(await post(valid({ slippageBps: 5 })), 422, 'VALIDATION_ERROR', 'slippageBps: only with amountIn');
    expectError(
      await post(valid({ amountIn: '1000', slippageBps: 5 }), { path: '/v1/swap/sign' }),
      400,
      'UNSUPPORTED_FIELD',
      'slippageBps: unsupported field (on /v2/swap/sign only)',
    );
  });

  it('behavior: minAmountOut without amountIn is ignored (no calldata) but still validated', async () => {
    const res = await post(valid({ minAmountOut: '5' }));
    expect(res.status).toBe(200);
    expect(res.body.calldata).toBeUndefined();
    expectError(
      await post(valid({ minAmountOut: '05' })),
      422,
      'VALIDATION_ERROR',
      'minAmountOut: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)',
    );
  });

  it('boundary: fee 0 and fee = MAX_FEE (10000) sign; 10001 is 422', async () => {
    for (const fee of ['0', '10000']) {
      const res = await post(valid({ fee }));
      expect(res.status).toBe(200);
      expect(decodeVd(res.body.verificationData).fee).toBe(BigInt(fee));
    }
    expectError(await post(valid({ fee: '10001' })), 422, 'VALIDATION_ERROR', 'fee: must be between 0 and 10000');
  });

  it('boundary: MAX_FEE is the deployment setting', async () => {
    const g = await startFixture({ chains: [8453], maxFee: 100n });
    try {
      expect((await post(valid({ fee: '100' }), { app: g.app })).status).toBe(200);
      expectError(
        await post(valid({ fee: '101' }), { app: g.app }),
        422,
        'VALIDATION_ERROR',
        'fee: must be between 0 and 100',
      );
    } finally {
      await g.close();
    }
  });

  it('boundary: amountIn 1 and 2^256-1 give calldata carrying them; 0 and 2^256 are 422', async () => {
    for (const amountIn of [1n, MAX_UINT256]) {
      const res = await post(valid({ amountIn: amountIn.toString(), minAmountOut: MAX_UINT256.toString() }));
      expect(res.status).toBe(200);
      const call = decodeCalldata(res.body.calldata);
      expect(call.amountIn).toBe(amountIn);
      expect(call.minOutAmount).toBe(MAX_UINT256);
    }
    const range = 'amountIn: must be between 1 and 2^256-1';
    expectError(await post(valid({ amountIn: '0' })), 422, 'VALIDATION_ERROR', range);
    expectError(await post(valid({ amountIn: (MAX_UINT256 + 1n).toString() })), 422, 'VALIDATION_ERROR', range);
    expectError(
      await post(valid({ amountIn: '1', minAmountOut: (MAX_UINT256 + 1n).toString() })),
      422,
      'VALIDATION_ERROR',
      'minAmountOut: must be between 0 and 2^256-1',
    );
  });

  it('boundary: addresses lowercase, uppercase and EIP-55 are accepted; a wrong checksum is 422', async () => {
    const lower = WETH(8453).toLowerCase();
    const upper = `0x${lower.slice(2).toUpperCase()}`;
    for (const tokenIn of [lower, upper, getAddress(lower)]) {
      const res = await post(valid({ tokenIn, userAddress: USER.toLowerCase() }));
      expect(res.status).toBe(200);
    }
    // Flip the case of the first letter of the checksummed form: mixed case, wrong checksum.
    const good = getAddress(lower);
    const i = good.slice(2).search(/[a-fA-F]/) + 2;
    const c = good[i]!;
    const bad = good.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + good.slice(i + 1);
    expectError(await post(valid({ tokenIn: bad })), 422, 'VALIDATION_ERROR', 'tokenIn: invalid checksum');
    expectError(
      await post(valid({ userAddress: 'not-an-address' })),
      422,
      'VALIDATION_ERROR',
      'userAddress: must be a 0x-prefixed 20-byte hex address',
    );
  });

  it('boundary: the zero address and tokenIn == tokenOut are 422', async () => {
    const zero = '0x0000000000000000000000000000000000000000';
    expectError(await post(valid({ tokenIn: zero })), 422, 'VALIDATION_ERROR', 'tokenIn: zero address not allowed');
    expectError(
      await post(valid({ userAddress: zero })),
      422,
      'VALIDATION_ERROR',
      'userAddress: zero address not allowed',
    );
    expectError(
      await post(valid({ tokenOut: WETH(8453).toLowerCase() })),
      422,
      'VALIDATION_ERROR',
      'tokenOut: must differ from tokenIn',
    );
  });

  it('boundary: chainId omitted and 0 mean 8453; 56 signs with the 56 key; "56", -1, 1.5 are 422; 1 is 400', async () => {
    const at = async (body: Record<string, unknown>) => {
      const res = await post(body);
      expect(res.status).toBe(200);
      return decodeVd(res.body.verificationData);
    };
    const sig8453 = (await at(valid())).signature;
    expect((await at(valid({ chainId: 0 }))).signature).toBe(sig8453);
    const on56 = await at({ chainId: 56, tokenIn: USDT, tokenOut: WETH(56), fee: '30', userAddress: USER });
    expect(on56.originRate).toBe(0n);
    expectError(await post(valid({ chainId: '56' })), 422, 'VALIDATION_ERROR', 'chainId: must be an integer');
    expectError(await post(valid({ chainId: -1 })), 422, 'VALIDATION_ERROR', 'chainId: must be a non-negative integer');
    expectError(await post(valid({ chainId: 1.5 })), 422, 'VALIDATION_ERROR', 'chainId: must be an integer');
    expectError(
      await post(valid({ chainId: 1 })),
      400,
      'UNSUPPORTED_CHAIN',
      'chainId: 1 is not served (served: 8453, 56, 4663)',
    );
    expectError(
      await post(valid({ chainId: 1e20 })),
      400,
      'UNSUPPORTED_CHAIN',
      'chainId: too large, not served (served: 8453, 56, 4663)',
    );
  });

  it('behavior: a text/plain Content-Type is parsed too (the gateway forwards the bytes untouched)', async () => {
    expect((await post(valid(), { contentType: 'text/plain' })).status).toBe(200);
  });
});

describe('originRate', () => {
  it('behavior: the chain setting is signed by default, the integrator override wins on its chain only', async () => {
    const onBsc = { chainId: 56, tokenIn: WETH(56), tokenOut: USDT, fee: '30', userAddress: USER };
    const overridden = await post(onBsc, { integratorId: 'override' });
    expect(decodeVd(overridden.body.verificationData).originRate).toBe(12345n);
    const plain = await post(onBsc);
    expect(decodeVd(plain.body.verificationData).originRate).toBe(0n);
    const base = await post(valid(), { integratorId: 'override' });
    expect(decodeVd(base.body.verificationData).originRate).toBe(777n);
  });
});

describe('authentication (internal token, integrator)', () => {
  const msgMissing = 'missing internal token (this service only accepts calls from the gateway)';
  const msgInvalid = 'invalid internal token (this service only accepts calls from the gateway)';

  it('error: no X-Internal-Token is 401', async () => {
    expectError(await post(valid(), { token: null }), 401, 'UNAUTHORIZED', msgMissing);
  });

  it('error: a wrong token (same length, prefix, longer) is 401', async () => {
    const wrongs = [
      INTERNAL_TOKEN.slice(0, -1) + (INTERNAL_TOKEN.endsWith('a') ? 'b' : 'a'),
      INTERNAL_TOKEN.slice(0, 8),
      INTERNAL_TOKEN + 'x',
    ];
    for (const token of wrongs) expectError(await post(valid(), { token }), 401, 'UNAUTHORIZED', msgInvalid);
  });

  it('precedence: 401 token before 413, INVALID_JSON, integrator', async () => {
    expectError(await post(null, { token: 'nope', raw: 'x'.repeat(20_000) }), 401, 'UNAUTHORIZED', msgInvalid);
    expectError(await post(null, { token: null, raw: '{bad', integratorId: null }), 401, 'UNAUTHORIZED', msgMissing);
  });

  it('error: missing, malformed, unknown or disabled integrator is 401 (before body checks)', async () => {
    expectError(
      await post(null, { integratorId: null, raw: '{bad' }),
      401,
      'UNAUTHORIZED',
      'missing integrator id (X-Integrator-Id)',
    );
    expectError(
      await post(valid(), { integratorId: 'a b' }),
      401,
      'UNAUTHORIZED',
      'malformed integrator id (X-Integrator-Id)',
    );
    expectError(await post(valid(), { integratorId: 'ghost' }), 401, 'UNAUTHORIZED', 'unknown integrator');
    expectError(await post(valid(), { integratorId: 'off' }), 401, 'UNAUTHORIZED', 'integrator is disabled');
  });

  it('error: a malformed integrator record is 500 INTERNAL_ERROR (operator error, no detail leaked)', async () => {
    expectError(await post(valid(), { integratorId: 'broken' }), 500, 'INTERNAL_ERROR', 'internal error');
  });
});

describe('body', () => {
  it('error: body over 16 KiB is 413; exactly 16 KiB is accepted', async () => {
    const json = JSON.stringify(valid());
    const exact = json + ' '.repeat(16 * 1024 - json.length);
    expect(Buffer.byteLength(exact)).toBe(16384);
    expect((await post(null, { raw: exact })).status).toBe(200);
    expectError(await post(null, { raw: exact + ' ' }), 413, 'PAYLOAD_TOO_LARGE', 'body: larger than 16384 bytes');
  });

  it('error: empty, malformed and non-object bodies are 400 INVALID_JSON', async () => {
    expectError(await post(null, { raw: '' }), 400, 'INVALID_JSON', 'body: empty; a JSON object is required');
    expectError(await post(null, { raw: '  \n' }), 400, 'INVALID_JSON', 'body: empty; a JSON object is required');
    expectError(await post(null, { raw: '{"tokenIn":' }), 400, 'INVALID_JSON', 'body: malformed JSON');
    for (const raw of ['[]', 'null', '"x"', '42', 'true']) {
      expectError(await post(null, { raw }), 400, 'INVALID_JSON', 'request body must be a JSON object');
    }
  });

  it('error: an unknown field is 400 UNSUPPORTED_FIELD, before any field validation', async () => {
    expectError(await post(valid({ extra: 1 })), 400, 'UNSUPPORTED_FIELD', 'extra: unsupported field');
    expectError(await post({ fee: 'bad', nonce: 1 }), 400, 'UNSUPPORTED_FIELD', 'nonce: unsupported field');
    const proto = `{"__proto__":{"x":1},${JSON.stringify(valid()).slice(1)}`;
    expectError(await post(null, { raw: proto }), 400, 'UNSUPPORTED_FIELD', '__proto__: unsupported field');
  });

  it('error: field validation is 422 in field order (chainId, tokenIn, tokenOut, fee, userAddress, amountIn, minAmountOut)', async () => {
    expectError(await post({}), 422, 'VALIDATION_ERROR', 'tokenIn: is required');
    expectError(await post({ tokenIn: WETH(8453) }), 422, 'VALIDATION_ERROR', 'tokenOut: is required');
    expectError(await post(valid({ fee: 30 })), 422, 'VALIDATION_ERROR', 'fee: must be a string');
    expectError(
      await post(valid({ fee: '-1', userAddress: 'x' })),
      422,
      'VALIDATION_ERROR',
      'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)',
    );
    expectError(
      await post(valid({ chainId: -1, tokenIn: 'x' })),
      422,
      'VALIDATION_ERROR',
      'chainId: must be a non-negative integer',
    );
  });
});

describe('precedence after validation', () => {
  it('precedence: VALIDATION_ERROR before UNSUPPORTED_CHAIN', async () => {
    expectError(
      await post(valid({ chainId: 1, fee: 'x' })),
      422,
      'VALIDATION_ERROR',
      'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)',
    );
  });

  it('error: a served chain not enabled for the key is 400 UNSUPPORTED_CHAIN (before 503, pair, whitelist)', async () => {
    const onBsc = { chainId: 56, tokenIn: WETH(8453), tokenOut: USDC, fee: '30', userAddress: OTHER_USER };
    expectError(
      await post(onBsc, { integratorId: 'limited' }),
      400,
      'UNSUPPORTED_CHAIN',
      'chainId: 56 is not enabled for this API key',
    );
  });

  it('precedence: UNSUPPORTED_CHAIN (not served) before whitelist and pair checks', async () => {
    expectError(
      await post(valid({ chainId: 1, userAddress: OTHER_USER, tokenOut: WBTC(8453) })),
      400,
      'UNSUPPORTED_CHAIN',
      'chainId: 1 is not served (served: 8453, 56, 4663)',
    );
  });

  it('error: a chain without a pair registry is 503 SERVICE_UNAVAILABLE, before PAIR_NOT_FOUND and the whitelist', async () => {
    const g = await startFixture({ registries: [8453] });
    try {
      const body = { chainId: 56, tokenIn: WETH(8453), tokenOut: USDC, fee: '30', userAddress: OTHER_USER };
      expectError(
        await post(body, { app: g.app }),
        503,
        'SERVICE_UNAVAILABLE',
        'chain 56: the pair list is not loaded yet (bootstrapping); retry shortly',
      );
      // Once the indexer writes the registry (and announces it), the same chain signs.
      await g.redis.set(g.keys.pairs(56), JSON.stringify(reg(56)));
      await g.redis.publish(g.keys.updates(56), JSON.stringify({ type: 'pairs', chainId: 56, blockNumber: 101 }));
      await waitFor(() => g.pairs.get(56) !== undefined);
      const ok = await post(
        { chainId: 56, tokenIn: WETH(56), tokenOut: USDT, fee: '30', userAddress: USER },
        { app: g.app },
      );
      expect(ok.status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it('error: PAIR_NOT_FOUND names the leg and the quote token the chain expects (USDC on 56)', async () => {
    const bsc = (tokenIn: string, tokenOut: string) =>
      post({ chainId: 56, tokenIn, tokenOut, fee: '30', userAddress: USER });
    expectError(
      await bsc(WETH(56), USDC),
      400,
      'PAIR_NOT_FOUND',
      `tokenOut: pair WETH/${USDC} (USDC on chain 8453) is not tracked on chain 56; the quote token there is USDT (${USDT})`,
    );
    expectError(
      await bsc(USDC, WETH(56)),
      400,
      'PAIR_NOT_FOUND',
      `tokenIn: pair WETH/${USDC} (USDC on chain 8453) is not tracked on chain 56; the quote token there is USDT (${USDT})`,
    );
    expectError(
      await bsc(USDT, WETH(8453)),
      400,
      'PAIR_NOT_FOUND',
      `tokenOut: ${WETH(8453)} (WETH on chain 8453) is not a tracked base token on chain 56 (pairs there are against USDT; base tokens: WETH, WBTC)`,
    );
    expectError(
      await bsc(WETH(56), WBTC(56)),
      400,
      'PAIR_NOT_FOUND',
      `tokenOut: pair WETH/WBTC is not tracked on chain 56: every pair there is against USDT, so one leg must be USDT (${USDT})`,
    );
    const stranger = OTHER_USER;
    expectError(
      await bsc(stranger, WETH(8453)),
      400,
      'PAIR_NOT_FOUND',
      `tokenIn, tokenOut: pair ${stranger}/${WETH(8453)} (WETH on chain 8453) is not tracked on chain 56: neither token is listed there; the quote token there is USDT (${USDT})`,
    );
  });

  it('precedence: PAIR_NOT_FOUND before ADDRESS_NOT_WHITELISTED', async () => {
    const res = await post(valid({ tokenOut: WBTC(8453), userAddress: OTHER_USER }));
    expect(res.body.error.code).toBe('PAIR_NOT_FOUND');
  });

  it('error: a user address outside the whitelist is 403 ADDRESS_NOT_WHITELISTED (whitelist is case-insensitive)', async () => {
    expectError(
      await post(valid({ userAddress: OTHER_USER })),
      403,
      'ADDRESS_NOT_WHITELISTED',
      `userAddress: ${OTHER_USER} is not whitelisted for this API key`,
    );
    const upper = `0x${USER.slice(2).toUpperCase()}`;
    expect((await post(valid({ userAddress: upper }))).status).toBe(200);
  });

  it('behavior: a whitelist change is seen by the next request', async () => {
    await f.putIntegrator(integrator('mutable', { whitelist: [] }));
    expect((await post(valid(), { integratorId: 'mutable' })).status).toBe(403);
    await f.putIntegrator(integrator('mutable'));
    expect((await post(valid(), { integratorId: 'mutable' })).status).toBe(200);
  });
});

describe('server-side failures', () => {
  const throwingSigner: DigestSigner = {
    address: '0x0000000000000000000000000000000000000001',
    backend: 'noble',
    sign: () => {
      throw new Error('hardware wallet unplugged');
    },
  };
  async function withDeps(
    override: (d: SignerDeps) => SignerDeps,
    run: (app: ReturnType<typeof createApp>) => Promise<void>,
  ) {
    const g = await startFixture({ chains: [8453], override });
    try {
      await run(g.app);
    } finally {
      await g.close();
    }
  }

  it('error: a signer failure is 500 SIGNING_FAILED with a generic message; not-whitelisted still wins', async () => {
    await withDeps(
      (d) => ({ ...d, signers: new Map([[8453, throwingSigner]]) }),
      async (app) => {
        expectError(await post(valid(), { app }), 500, 'SIGNING_FAILED', 'signing failed');
        expect((await post(valid({ userAddress: OTHER_USER }), { app })).body.error.code).toBe(
          'ADDRESS_NOT_WHITELISTED',
        );
      },
    );
  });

  it('error: an encoder failure is 500 ENCODING_FAILED (originRate beyond uint256)', async () => {
    await withDeps(
      (d) => ({ ...d, originRates: new Map([[8453, MAX_UINT256 + 1n]]) }),
      async (app) => expectError(await post(valid(), { app }), 500, 'ENCODING_FAILED', 'encoding failed'),
    );
  });

  it('error: anything unexpected is 500 INTERNAL_ERROR without its text', async () => {
    await withDeps(
      (d) => ({
        ...d,
        pairs: {
          get: () => {
            throw new Error('secret detail 0xdeadbeef');
          },
        },
      }),
      async (app) => {
        const res = await post(valid(), { app });
        expectError(res, 500, 'INTERNAL_ERROR', 'internal error');
        expect(res.text).not.toContain('deadbeef');
      },
    );
  });

  it('error: integrator data unreadable (Redis down) is 503 on v2 and on v1 (an outage, not a bootstrapping state)', async () => {
    await withDeps(
      (d) => ({ ...d, integrators: { get: () => Promise.reject(new Error('Connection is closed.')) } }),
      async (app) => {
        expectError(
          await post(valid(), { app }),
          503,
          'SERVICE_UNAVAILABLE',
          'integrator data is temporarily unavailable; retry shortly',
        );
        expectError(
          await post(valid(), { app, path: '/v1/swap/sign' }),
          503,
          'SERVICE_UNAVAILABLE',
          'integrator data is temporarily unavailable; retry shortly',
        );
      },
    );
  });
});

describe('legacy /v1/swap/sign', () => {
  const v1 = (body: unknown, o: PostOptions = {}) => post(body, { path: '/v1/swap/sign', ...o });

  it('behavior: signs on 8453 with the earlier response shape (no deadline), Deprecation and Link headers', async () => {
    const res = await v1(valid({ amountIn: '10' }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['verificationData', 'timestamp', 'calldata']);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.link).toBe('</v2/swap/sign>; rel="successor-version"');
    const {
      deadline: _deadline,
      amountOut: _amountOut,
      minAmountOut: _minAmountOut,
      blockNumber: _blockNumber,
      ...v2
    } = (await post(valid({ amountIn: '10' }))).body as Record<string, unknown>;
    expect(res.body).toEqual(v2);
  });

  it('error: a chainId field is 400 UNSUPPORTED_FIELD, even chainId 8453', async () => {
    for (const chainId of [8453, 0, 56]) {
      expectError(
        await v1(valid({ chainId })),
        400,
        'UNSUPPORTED_FIELD',
        'chainId: unsupported field (this endpoint serves chain 8453 only)',
      );
    }
  });

  it('error: an untracked pair is 422 VALIDATION_ERROR with the PAIR_NOT_FOUND text', async () => {
    expectError(
      await v1(valid({ tokenOut: USDT })),
      422,
      'VALIDATION_ERROR',
      `tokenOut: pair WETH/${USDT} (USDT on chain 56) is not tracked on chain 8453; the quote token there is USDC (${USDC})`,
    );
  });

  it('error: before the pair registry exists it is 422 too (never 503 on v1)', async () => {
    const g = await startFixture({ registries: [] });
    try {
      expectError(
        await v1(valid(), { app: g.app }),
        422,
        'VALIDATION_ERROR',
        'tokenIn, tokenOut: no pair is tradable on chain 8453 yet (the pair list is still loading); retry shortly',
      );
    } finally {
      await g.close();
    }
  });

  it('error: a key not enabled for 8453 is 401 on v1 (no UNSUPPORTED_CHAIN there); 403 whitelist and 401 token as v2', async () => {
    expectError(
      await v1(valid(), { integratorId: 'bsc-only' }),
      401,
      'UNAUTHORIZED',
      'this API key is not enabled for chain 8453, the only chain of /v1',
    );
    expect((await v1(valid(), { integratorId: 'limited' })).status).toBe(200);
    expect((await v1(valid({ userAddress: OTHER_USER }))).body.error.code).toBe('ADDRESS_NOT_WHITELISTED');
    expectError(
      await v1(valid(), { token: null }),
      401,
      'UNAUTHORIZED',
      'missing internal token (this service only accepts calls from the gateway)',
    );
  });

  it('behavior: /v1 is not mounted when 8453 is not served (404)', async () => {
    const g = await startFixture({ chains: [56] });
    try {
      expectError(await v1(valid(), { app: g.app }), 404, 'NOT_FOUND', 'no route for POST /v1/swap/sign');
    } finally {
      await g.close();
    }
  });
});

describe('routes, request id, operations', () => {
  it('error: unknown route is 404 and wrong method 405 with Allow, both before the token check', async () => {
    const nf = await request(f.app).get('/v2/nope').set('X-Request-Id', 'rid-404');
    expectError(nf, 404, 'NOT_FOUND', 'no route for GET /v2/nope');
    for (const path of ['/v2/swap/sign', '/v1/swap/sign']) {
      const res = await request(f.app).get(path).set('X-Request-Id', 'rid-405');
      expectError(res, 405, 'METHOD_NOT_ALLOWED', 'GET is not allowed here');
      expect(res.headers.allow).toBe('POST');
    }
  });

  it('behavior: the gateway request id is echoed in the header and in error bodies; a fresh one otherwise', async () => {
    const res = await post(valid({ fee: 'x' }), { requestId: 'gw-abc.123' });
    expect(res.headers['x-request-id']).toBe('gw-abc.123');
    expect(res.body.error.requestId).toBe('gw-abc.123');
    const fresh = await request(f.app).post('/v2/swap/sign').set('X-Internal-Token', INTERNAL_TOKEN).send('{}');
    expect(fresh.body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.headers['x-request-id']).toBe(fresh.body.error.requestId);
  });

  /** A fixture whose log lines (at `level`) are collected. */
  async function loggedFixture(level: string) {
    const lines: string[] = [];
    const stream = new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        lines.push(chunk.toString());
        cb();
      },
    });
    const g = await startFixture({ chains: [8453], logStream: stream, logLevel: level });
    return { g, lines };
  }

  it('behavior: log lines of a request carry the gateway request id and the integrator; no secret', async () => {
    const { g, lines } = await loggedFixture('debug');
    try {
      await post(valid(), { app: g.app, requestId: 'gw-log-1' });
      await post(valid({ userAddress: OTHER_USER }), { app: g.app, requestId: 'gw-log-2' });
      await post(valid(), { app: g.app, requestId: 'gw-log-3', token: 'wrong-token-value' });
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed.find((l) => l.requestId === 'gw-log-1')).toMatchObject({
        message: 'quote signed',
        integratorId: 'acme',
        chainId: 8453,
        assetIn: WETH(8453),
        assetOut: USDC,
        userAddress: USER,
        timestamp: NOW_S,
      });
      expect(parsed.find((l) => l.requestId === 'gw-log-2')).toMatchObject({
        message: 'request rejected',
        code: 'ADDRESS_NOT_WHITELISTED',
        integratorId: 'acme',
      });
      expect(parsed.find((l) => l.requestId === 'gw-log-3')).toMatchObject({
        message: 'request rejected',
        code: 'UNAUTHORIZED',
      });
      const all = lines.join('\n');
      expect(all).not.toContain(INTERNAL_TOKEN);
      expect(all).not.toContain('wrong-token-value');
      expect(all).not.toContain(testKey('api-signer-8453').slice(2));
    } finally {
      await g.close();
    }
  });

  it('behavior: at info a signature writes no log line (the audit trail holds it); a refusal does', async () => {
    const { g, lines } = await loggedFixture('info');
    try {
      await post(valid(), { app: g.app, requestId: 'gw-info-1' });
      await post(valid({ userAddress: OTHER_USER }), { app: g.app, requestId: 'gw-info-2' });
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed.filter((l) => l.requestId === 'gw-info-1')).toEqual([]);
      expect(parsed.find((l) => l.requestId === 'gw-info-2')).toMatchObject({
        message: 'request rejected',
        code: 'ADDRESS_NOT_WHITELISTED',
      });
      expect(await g.redis.xlen(g.keys.audit(8453))).toBe(1);
    } finally {
      await g.close();
    }
  });

  it('behavior: /healthz 200, /readyz 200 (503 when a check fails), no token needed', async () => {
    expect((await request(f.app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(f.app).get('/readyz')).body).toEqual({ status: 'ok', checks: { redis: 'ok' } });
    const g = await startFixture({
      chains: [8453],
      override: (d) => ({ ...d, readiness: { redis: () => Promise.reject(new Error('down')) } }),
    });
    try {
      const res = await request(g.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', checks: { redis: 'fail: down' } });
    } finally {
      await g.close();
    }
  });

  it('behavior: /metrics counts requests by route and code and has the signing latency histogram', async () => {
    await post(valid());
    await post(valid({ fee: 'x' }));
    const text = (await request(f.app).get('/metrics')).text;
    expect(text).toMatch(/http_requests_total\{method="POST",route="\/v2\/swap\/sign",code="200"[^}]*\} [1-9]/);
    expect(text).toMatch(/http_requests_total\{method="POST",route="\/v2\/swap\/sign",code="422"[^}]*\} [1-9]/);
    expect(text).toMatch(/signer_sign_duration_seconds_count\{[^}]*chain="8453"[^}]*\} [1-9]/);
    expect(text).toMatch(/signer_signatures_total\{chain="8453",version="v2"[^}]*\} [1-9]/);
  });

  it('security: /healthz, /readyz and /metrics refuse a host name that is not an IP, localhost or OPS_ALLOWED_HOSTS (DNS rebinding)', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      const res = await request(f.app).get(path).set('Host', 'rebound.attacker.example:8081');
      expectError(res, 400, 'MALFORMED_REQUEST', 'Host: not a host name of the operator port (OPS_ALLOWED_HOSTS)');
    }
    expect((await request(f.app).get('/metrics').set('Host', 'localhost:8081')).status).toBe(200);
    const named = createApp({ ...f.deps, metrics: freshMetrics(), operatorAccess: { allowedHosts: ['signer'] } });
    expect((await request(named).get('/metrics').set('Host', 'signer:8081')).status).toBe(200);
    // The sign routes are the gateway's, reached under the signer's service name; the internal token guards them.
    const signed = await post(valid()).set('Host', 'signer:8081');
    expect(signed.status).toBe(200);
  });

  it('security: with OPS_TOKEN, /metrics needs the bearer token and the probes stay open', async () => {
    const token = 'signer-ops-token-0123456789';
    const guarded = createApp({ ...f.deps, metrics: freshMetrics(), operatorAccess: { allowedHosts: [], token } });
    const refused = await request(guarded).get('/metrics');
    expectError(refused, 401, 'UNAUTHORIZED', 'Authorization: the operator token (OPS_TOKEN) is required');
    expect((await request(guarded).get('/metrics').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await request(guarded).get('/healthz')).status).toBe(200);
    expect((await request(guarded).get('/readyz')).status).toBe(200);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
