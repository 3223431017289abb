/**
 * Failed authentications per client address (http/auth-failures.ts): past the limit a client
 * is refused with 429 and Retry-After before any key lookup, X-Forwarded-For counts only behind
 * a trusted proxy. Real gateways on real sockets, real Redis.
 */
import { request as httpRequest } from 'node:http';
import Redis from 'ioredis';
import { clientAddress, proxyList } from '../src/http/auth-failures';
import { harness, type Harness } from './support/harness';

let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.putBook(8453);
});
afterAll(() => h.cleanup());

interface Answer {
  status: number;
  retryAfter?: string;
  code?: string;
  requestId?: string;
}

/** GET /v2/price on a real socket from 127.0.0.1, with `key` and optional extra headers. */
function price(base: string, key: string | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}/v2/price?chainId=8453`,
      { headers: { ...(key ? { 'X-API-KEY': key } : {}), ...headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            code: res.statusCode === 200 ? undefined : (JSON.parse(body) as { error: { code: string } }).error.code,
            requestId: res.headers['x-request-id'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Counts start over each minute: a test that straddles the boundary waits for it first. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((r) => setTimeout(r, left + 10));
}
beforeEach(awayFromMinuteEnd);

const WRONG = 'pmm_wrong-key-0000000000000000000000000000000000';

describe('failed authentications per client address', () => {
  it('behavior: past the limit every request of the address is 429 with Retry-After, even with a valid key, and no key is looked up', async () => {
    const valid = await h.apiKey();
    const gw = await h.gateway({ authFailureLimit: 3 });
    const base = await h.listen(gw.app);
    for (let i = 0; i < 3; i++) expect((await price(base, `${WRONG}${i}`)).status).toBe(401);
    const refused = await price(base, valid);
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.requestId).toBeDefined();

    // Refused before the key cache: nothing is read from Redis for the refused requests.
    const monitor = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const seen: string[] = [];
    const m = await monitor.monitor();
    m.on('monitor', (_time: string, args: string[]) => {
      if (args.some((a) => a.startsWith(`${h.prefix}:apikey:`))) seen.push(args.join(' '));
    });
    for (let i = 0; i < 5; i++) expect((await price(base, `${WRONG}x${i}`)).status).toBe(429);
    await new Promise((r) => setTimeout(r, 100));
    m.disconnect();
    monitor.disconnect();
    expect(seen).toEqual([]);
  });

  it('behavior: X-Forwarded-For is ignored without a trusted proxy, and used behind one', async () => {
    const direct = await h.listen((await h.gateway({ authFailureLimit: 2 })).app);
    for (let i = 0; i < 2; i++) await price(direct, WRONG, { 'X-Forwarded-For': `198.51.100.${i}` });
    // A client cannot escape its count by naming another address.
    expect((await price(direct, WRONG, { 'X-Forwarded-For': '198.51.100.77' })).status).toBe(429);

    const proxied = await h.listen(
      (await h.gateway({ authFailureLimit: 2, trustedProxies: ['127.0.0.0/8', '::1'] })).app,
    );
    const valid = await h.apiKey();
    // What the client wrote is left of what the trusted proxy appended: the proxy's entry counts.
    const from = (client: string) => ({ 'X-Forwarded-For': `203.0.113.250, ${client}` });
    for (let i = 0; i < 2; i++) expect((await price(proxied, WRONG, from('203.0.113.5'))).status).toBe(401);
    expect((await price(proxied, valid, from('203.0.113.5'))).status).toBe(429);
    expect((await price(proxied, valid, from('203.0.113.6'))).status).toBe(200);
  });

  it('default: clientAddress takes the right-most untrusted hop, and plain IPv4 for mapped addresses', () => {
    const req = (remoteAddress: string, xff?: string) =>
      ({ socket: { remoteAddress }, headers: xff ? { 'x-forwarded-for': xff } : {} }) as never;
    const proxies = proxyList(['10.0.0.0/8', '2001:db8::/32']);
    expect(clientAddress(req('::ffff:192.0.2.1', '203.0.113.9'), proxies)).toBe('192.0.2.1');
    expect(clientAddress(req('10.1.2.3', 'evil, 203.0.113.9, 10.0.0.7'), proxies)).toBe('203.0.113.9');
    expect(clientAddress(req('2001:db8::1', '10.0.0.1, 10.0.0.2'), proxies)).toBe('10.0.0.1');
    expect(clientAddress(req('10.1.2.3'), proxies)).toBe('10.1.2.3');
    expect(() => proxyList(['10.0.0.0/33'])).toThrow('not an IP address or CIDR range: "10.0.0.0/33"');
  });
});
