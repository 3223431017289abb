/**
 * The SDK never hands out a quote past its deadline: signSwap against a real local HTTP server
 * that answers quotes with a deadline behind or ahead of this machine's clock, and the boundary
 * of assertQuoteLive (the router accepts a block whose timestamp equals the deadline).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertQuoteLive, PmmApiError, PmmClient } from '@pmm/client';

let server: Server;
let base: string;
let answer = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const REQ = { chainId: 8453, tokenIn: '0x1', tokenOut: '0x2', fee: 10, userAddress: '0x3', amountIn: 1n };
const quote = (deadline: number) => ({
  verificationData: '0xab',
  timestamp: deadline - 60,
  deadline,
  calldata: '0xcd',
});
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the quote deadline in the SDK', () => {
  it('behavior: a quote whose deadline is ahead is handed out as answered', async () => {
    answer = JSON.stringify(quote(nowSeconds() + 30));
    const got = await new PmmClient({ baseUrl: base, apiKey: 'k' }).signSwap(REQ);
    expect(got).toEqual(JSON.parse(answer));
  });

  it('error: a quote already past its deadline when it arrives is QUOTE_EXPIRED, its calldata never returned', async () => {
    answer = JSON.stringify(quote(nowSeconds() - 5));
    const err = await new PmmClient({ baseUrl: base, apiKey: 'k' }).signSwap(REQ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PmmApiError);
    expect(err).toMatchObject({ status: 0, code: 'QUOTE_EXPIRED' });
    expect((err as Error).message).not.toContain('0xcd');
  });

  it('edge: live through the deadline second itself, refused from the next one', () => {
    const deadline = 1_767_225_660;
    expect(() => assertQuoteLive(quote(deadline), deadline * 1000 + 999)).not.toThrow();
    expect(() => assertQuoteLive(quote(deadline), (deadline + 1) * 1000)).toThrow(/QUOTE_EXPIRED/);
    // An answer without the field (an older gateway) is left to the router.
    expect(() => assertQuoteLive({ verificationData: '0xab', timestamp: 1 } as never, Date.now())).not.toThrow();
  });
});
