/**
 * End to end on the devnet, as `npm start` runs it: a real anvil chain (8453) with the
 * reference router, the indexer, the signer and the gateway as processes from their builds
 * (testkit's startSystem), the development API key the gateway seeds for the chain's test user.
 * An integrator reads the price, asks for a signed quote with calldata sized from that price,
 * and executes the swap on-chain with viem (independent of the code under test).
 */
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import request from 'supertest';
import { TestTokenArtifact } from '@pmm/contracts';
import { type OrderbookResponse } from '@pmm/protocol';
import { startSystem, type System } from '@pmm/testkit';
import { call } from './support/harness';
import { openStream } from './support/sse-client';

jest.setTimeout(180_000);

const erc20Abi = TestTokenArtifact.abi;

let sys: System;
/** The gateway's public URL and its development key (whitelisted for the test user). */
let gw: string;
let key: string;

beforeAll(async () => {
  sys = await startSystem({ chains: [8453] });
  gw = sys.gateway.url;
  key = sys.gateway.apiKey;
});

afterAll(async () => {
  await sys?.stop();
});

/** `value` (a decimal string) as an integer scaled by 10^decimals, rounding down. */
function scaled(value: string, decimals: number): bigint {
  const [int, frac = ''] = value.split('.');
  return BigInt(int! + frac.padEnd(decimals, '0').slice(0, decimals));
}

describe('price → sign → swap through the gateway', () => {
  it('behavior: the book from the indexer, a signed quote from the signer, and the swap succeeds on-chain', async () => {
    const c = sys.chain(8453);
    // 1. The price, once the indexer has written the first book (503 before that).
    let book: OrderbookResponse | undefined;
    const started = Date.now();
    while (!book && Date.now() - started < 60_000) {
      const res = await call(request(gw).get('/v2/price').set('X-API-KEY', key));
      if (res.status === 200 && (res.body as OrderbookResponse).pairs.length > 0) book = res.body as OrderbookResponse;
      else {
        expect([200, 503]).toContain(res.status);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(book).toBeDefined();
    expect(book!.chainId).toBe(8453);
    const weth = c.tokens.WETH!;
    const pair = book!.pairs.find((p) => p.baseToken.toLowerCase() === weth.address.toLowerCase())!;
    expect(pair.quoteToken.toLowerCase()).toBe(c.quoteToken.address.toLowerCase());
    const bestAsk = pair.asks[0]!;

    const v1 = await call(request(gw).get('/v1/price').set('X-API-KEY', key));
    expect(v1.status).toBe(200);
    expect(v1.body.chainId).toBeUndefined();

    // 2. Buy WETH with 100 USDC within the best ask level; minAmountOut from the book, less 1 %.
    const amountIn = 100n * 10n ** BigInt(c.quoteToken.decimals);
    const priceDecimals = 18;
    const price = scaled(bestAsk.price, priceDecimals); // USDC per WETH × 10^18
    const expectedOut =
      (amountIn * 10n ** BigInt(weth.decimals) * 10n ** BigInt(priceDecimals)) /
      (price * 10n ** BigInt(c.quoteToken.decimals));
    expect(scaled(bestAsk.amount, weth.decimals)).toBeGreaterThan(expectedOut); // stays within the first level
    const minAmountOut = (expectedOut * 99n) / 100n;
    const signed = await call(
      request(gw)
        .post('/v2/swap/sign')
        .set('X-API-KEY', key)
        .set('Content-Type', 'application/json')
        .send(
          JSON.stringify({
            chainId: 8453,
            tokenIn: c.quoteToken.address,
            tokenOut: weth.address,
            fee: '30',
            userAddress: c.testUser.address,
            amountIn: amountIn.toString(),
            minAmountOut: minAmountOut.toString(),
          }),
        ),
    );
    expect(signed.status).toBe(200);
    const calldata = signed.body.calldata as Hex;
    expect(calldata).toMatch(/^0x[0-9a-f]+$/);

    // 3. Approve and send the calldata as it is, from the whitelisted user (viem).
    const chain = defineChain({
      id: 8453,
      name: 'devnet-8453',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [c.rpcUrl] } },
    });
    const transport = http(c.rpcUrl, { retryCount: 0 });
    const pub = createPublicClient({ chain, transport, pollingInterval: 100 });
    const user = createWalletClient({ chain, transport, account: privateKeyToAccount(c.testUser.privateKey as Hex) });
    const balance = () =>
      pub.readContract({
        address: weth.address as Hex,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [c.testUser.address as Hex],
      }) as Promise<bigint>;
    const approveHash = await user.writeContract({
      address: c.quoteToken.address as Hex,
      abi: erc20Abi,
      functionName: 'approve',
      args: [c.contracts.router as Hex, amountIn],
    });
    expect((await pub.waitForTransactionReceipt({ hash: approveHash })).status).toBe('success');
    const before = await balance();
    const swapHash = await user.sendTransaction({ to: c.contracts.router as Hex, data: calldata });
    const receipt = await pub.waitForTransactionReceipt({ hash: swapHash });
    expect(receipt.status).toBe('success');
    const received = (await balance()) - before;
    expect(received).toBeGreaterThanOrEqual(minAmountOut);
    expect(received).toBeLessThanOrEqual((expectedOut * 101n) / 100n);
  });

  it('behavior: the legacy sign route works through the gateway and carries the deprecation headers', async () => {
    const c = sys.chain(8453);
    const res = await call(
      request(gw)
        .post('/v1/swap/sign')
        .set('X-API-KEY', key)
        .set('Content-Type', 'application/json')
        .send(
          JSON.stringify({
            tokenIn: c.tokens.WETH!.address,
            tokenOut: c.quoteToken.address,
            fee: '10',
            userAddress: c.testUser.address,
          }),
        ),
    );
    expect(res.status).toBe(200);
    expect(res.body.calldata).toBeUndefined();
    expect(res.headers.deprecation).toBe('true');
  });

  it('error: a user address outside the key’s whitelist is 403 ADDRESS_NOT_WHITELISTED from the signer, passed through', async () => {
    const c = sys.chain(8453);
    const res = await call(
      request(gw)
        .post('/v2/swap/sign')
        .set('X-API-KEY', key)
        .set('Content-Type', 'application/json')
        .send(
          JSON.stringify({
            tokenIn: c.tokens.WETH!.address,
            tokenOut: c.quoteToken.address,
            fee: '10',
            userAddress: c.quoter.address,
          }),
        ),
    );
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ADDRESS_NOT_WHITELISTED');
  });
});

describe('the price stream on the devnet', () => {
  it('behavior: the stream follows real blocks: newer ids each time, data = the book of that block', async () => {
    const c = sys.chain(8453);
    const s = await openStream(gw, '/v2/price/stream?chainId=8453', { 'X-API-KEY': key });
    try {
      expect(s.status).toBe(200);
      await s.until((x) => x.events.filter((e) => e.event === 'book').length >= 4, 30_000);
      const books = s.events.filter((e) => e.event === 'book').slice(0, 4);
      const ids = books.map((e) => Number(e.id));
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
      const pub = createPublicClient({ transport: http(c.rpcUrl, { retryCount: 0 }) });
      for (const e of books) {
        const book = JSON.parse(e.data) as OrderbookResponse;
        expect(book.blockNumber).toBe(Number(e.id));
        expect(book.pairs.length).toBeGreaterThan(0);
        // The block exists on the chain with that timestamp (read independently with viem).
        const block = await pub.getBlock({ blockNumber: BigInt(book.blockNumber) });
        expect(book.blockTime).toBe(Number(block.timestamp));
      }
    } finally {
      s.close();
    }
  });
});
