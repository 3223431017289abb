/**
 * Failed authentications per client (keys/auth-failures.ts): past the limit a client's failed
 * attempts are 429 with Retry-After, counted when decided; a valid key always passes; routes
 * without a key are never refused; X-Forwarded-For counts only behind a trusted proxy; IPv6 by
 * /64; a full table still limits. Real gateways on real sockets, real Redis.
 */
import { request as httpRequest } from 'node:http';
import { AuthFailures, clientAddress, clientKey, proxyList } from '../../src/keys/auth-failures';
import { harness, type Harness } from '../support/harness';

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
  it('behavior: past the limit failed attempts are 429 with Retry-After; a valid key from the same address always passes; /healthz is never refused', async () => {
    const valid = await h.apiKey();
    const gw = await h.gateway({ authFailureLimit: 3 });
    const base = await h.listen(gw.app);
    for (let i = 0; i < 3; i++) expect((await price(base, `${WRONG}${i}`)).status).toBe(401);
    const refused = await price(base, `${WRONG}x`);
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.requestId).toBeDefined();
    expect((await price(base, undefined)).status).toBe(429);
    // Behind a NAT or a load balancer many integrators share an address: a guesser there must
    // not lock them out.
    expect((await price(base, valid)).status).toBe(200);
    const health = await new Promise<number>((resolve, reject) =>
      httpRequest(`${base}/healthz`, { agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end(),
    );
    expect(health).toBe(200);
  });

  it('behavior: concurrent guesses are counted when decided: exactly the limit are 401, the rest 429', async () => {
    const gw = await h.gateway({ authFailureLimit: 4 });
    const base = await h.listen(gw.app);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => price(base, `${WRONG}c${i}`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(16);
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
    expect((await price(proxied, WRONG, from('203.0.113.5'))).status).toBe(429);
    expect((await price(proxied, WRONG, from('203.0.113.6'))).status).toBe(401);
    expect((await price(proxied, valid, from('203.0.113.5'))).status).toBe(200);
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

  it('default: an IPv6 client is its /64; IPv4 and mapped addresses are themselves', () => {
    expect(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('::ffff:192.0.2.1')).toBe('0:0:0:0::/64');
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
  });

  it('behavior: addresses rotating inside one /64 share a count; a full table still limits new clients', () => {
    const req = (remoteAddress: string) => ({ socket: { remoteAddress }, headers: {} }) as never;
    const failures = new AuthFailures({ limit: 2, trustedProxies: [], now: () => 30_000 });
    expect(failures.fail(req('2001:db8:1:2::1'))).toBe(0);
    expect(failures.fail(req('2001:db8:1:2::2'))).toBe(0);
    expect(failures.fail(req('2001:db8:1:2:ffff::3'))).toBe(30);
    expect(failures.fail(req('2001:db8:1:3::1'))).toBe(0);

    const full = new AuthFailures({ limit: 1, trustedProxies: [], now: () => 0, maxClients: 2 });
    expect(full.fail(req('192.0.2.1'))).toBe(0);
    expect(full.fail(req('192.0.2.2'))).toBe(0);
    // Past the table's size, every new client shares one count, with the same limit.
    expect(full.fail(req('192.0.2.3'))).toBe(0);
    expect(full.fail(req('192.0.2.4'))).toBe(60);
    expect(full.fail(req('192.0.2.1'))).toBe(60);
  });
});
