/**
 * Independent check of what the signer returns, with viem (the signer uses its own encoder and
 * libsecp256k1/noble): the digest is recomputed with encodeAbiParameters + keccak256, the signer
 * recovered with recoverAddress, verificationData and calldata decoded with decodeAbiParameters /
 * decodeFunctionData. A fast-check property runs random valid requests through the HTTP app.
 */
import fc from 'fast-check';
import request from 'supertest';
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  keccak256,
  parseAbi,
  recoverAddress,
  type Hex,
} from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { INTERNAL_TOKEN, NOW_S, USER, startFixture, testKey, testRegistry, type Fixture } from '../support/fixture';

const SWAP_ABI = parseAbi([
  'function swap(address tokenIn, uint256 amountIn, address tokenOut, uint256 minOutAmount, uint256 quoteTimestamp, bytes verificationData)',
]);
const DIGEST_TYPES = [
  { type: 'address' },
  { type: 'address' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'address' },
] as const;
const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;
const MAX_UINT256 = (1n << 256n) - 1n;
const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const ORIGIN_RATES: Record<number, bigint> = { 8453: 0n, 56: 424242n, 4663: MAX_UINT256 };

let f: Fixture;

beforeAll(async () => {
  f = await startFixture({ originRates: ORIGIN_RATES });
});

afterAll(async () => {
  await f.close();
});

interface Req {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  fee: string;
  userAddress: string;
  amountIn?: string;
  minAmountOut?: string;
}

async function sign(body: Req) {
  const res = await request(f.app)
    .post('/v2/swap/sign')
    .set('X-Internal-Token', INTERNAL_TOKEN)
    .set('X-Integrator-Id', 'acme')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
  if (res.status !== 200) throw new Error(`unexpected ${res.status}: ${res.text}`);
  return res.body as { verificationData: Hex; timestamp: number; calldata?: Hex };
}

/** Checks one response against viem alone; returns nothing, throws on any mismatch. */
/** viem wants checksummed (or lowercase) addresses; the request may use any accepted case. */
const norm = (a: string): Hex => getAddress(a.toLowerCase());

async function checkIndependently(body: Req): Promise<void> {
  const out = await sign(body);
  const [fee, originRate, userAddress, signature] = decodeAbiParameters(VD_TYPES, out.verificationData);
  expect(fee).toBe(BigInt(body.fee));
  expect(originRate).toBe(ORIGIN_RATES[body.chainId]);
  expect(userAddress.toLowerCase()).toBe(body.userAddress.toLowerCase());
  // Canonical encoding: re-encoding the decoded values gives the same bytes.
  expect(encodeAbiParameters(VD_TYPES, [fee, originRate, userAddress, signature])).toBe(out.verificationData);

  const digest = keccak256(
    encodeAbiParameters(DIGEST_TYPES, [
      norm(body.tokenIn),
      norm(body.tokenOut),
      BigInt(out.timestamp),
      fee,
      originRate,
      norm(body.userAddress),
    ]),
  );
  expect(signature.length).toBe(2 + 130);
  const v = parseInt(signature.slice(130), 16);
  expect([27, 28]).toContain(v);
  expect(BigInt(`0x${signature.slice(66, 130)}`) <= SECP256K1_HALF_N).toBe(true); // low-s
  const recovered = await recoverAddress({ hash: digest, signature });
  expect(recovered).toBe(privateKeyToAddress(testKey(`api-signer-${body.chainId}`)));

  if (body.amountIn === undefined) {
    expect(out.calldata).toBeUndefined();
    return;
  }
  const args = [
    norm(body.tokenIn),
    BigInt(body.amountIn),
    norm(body.tokenOut),
    BigInt(body.minAmountOut ?? '0'),
    BigInt(out.timestamp),
    out.verificationData,
  ] as const;
  expect(out.calldata).toBe(encodeFunctionData({ abi: SWAP_ABI, functionName: 'swap', args }));
  const decoded = decodeFunctionData({ abi: SWAP_ABI, data: out.calldata! });
  expect(decoded.args[4]).toBe(BigInt(out.timestamp));
  expect(decoded.args[5]).toBe(out.verificationData);
}

describe('independent check with viem', () => {
  it('behavior: digest, signature (v 27/28, low-s) and recovered signer match, per chain', async () => {
    for (const chainId of [8453, 56, 4663]) {
      const r = testRegistry(chainId);
      await checkIndependently({
        chainId,
        tokenIn: r.quoteToken.address,
        tokenOut: r.baseTokens[0]!.address,
        fee: '30',
        userAddress: USER,
        amountIn: '1000000',
        minAmountOut: '1',
      });
    }
  });

  it('behavior: a signature of one chain does not recover to another chain key', async () => {
    const r = testRegistry(56);
    const out = await sign({
      chainId: 56,
      tokenIn: r.baseTokens[0]!.address,
      tokenOut: r.quoteToken.address,
      fee: '0',
      userAddress: USER,
    });
    const [fee, originRate, , signature] = decodeAbiParameters(VD_TYPES, out.verificationData);
    const digest = keccak256(
      encodeAbiParameters(DIGEST_TYPES, [
        r.baseTokens[0]!.address as Hex,
        r.quoteToken.address as Hex,
        BigInt(NOW_S),
        fee,
        originRate,
        USER,
      ]),
    );
    const recovered = await recoverAddress({ hash: digest, signature });
    expect(recovered).toBe(privateKeyToAddress(testKey('api-signer-56')));
    expect(recovered).not.toBe(privateKeyToAddress(testKey('api-signer-8453')));
  });

  it('property: random valid requests (chain, direction, fee, amounts, address case) all verify with viem', async () => {
    const caseOf = (address: string, style: number) =>
      style === 0 ? address.toLowerCase() : style === 1 ? `0x${address.slice(2).toUpperCase()}` : address;
    const arb = fc.record({
      chainId: fc.constantFrom(8453, 56, 4663),
      base: fc.constantFrom(0, 1),
      sell: fc.boolean(),
      fee: fc.oneof(fc.constantFrom(0n, 10_000n), fc.bigInt({ min: 0n, max: 10_000n })),
      amountIn: fc.option(fc.oneof(fc.constantFrom(1n, MAX_UINT256), fc.bigInt({ min: 1n, max: MAX_UINT256 })), {
        nil: undefined,
      }),
      minAmountOut: fc.option(fc.bigInt({ min: 0n, max: MAX_UINT256 }), { nil: undefined }),
      styles: fc.tuple(fc.nat(2), fc.nat(2), fc.nat(2)),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (p) => {
        const r = testRegistry(p.chainId);
        const base = r.baseTokens[p.base]!.address;
        const quote = r.quoteToken.address;
        const [tokenIn, tokenOut] = p.sell ? [base, quote] : [quote, base];
        const body: Req = {
          chainId: p.chainId,
          tokenIn: caseOf(tokenIn, p.styles[0]),
          tokenOut: caseOf(tokenOut, p.styles[1]),
          fee: p.fee.toString(),
          userAddress: caseOf(USER, p.styles[2]),
        };
        if (p.amountIn !== undefined) body.amountIn = p.amountIn.toString();
        if (p.minAmountOut !== undefined) body.minAmountOut = p.minAmountOut.toString();
        await checkIndependently(body);
      }),
      { numRuns: 300, seed: 0x51_9e_e2 },
    );
  });
});
