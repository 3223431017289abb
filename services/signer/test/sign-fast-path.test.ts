/**
 * The sign fast path (src/http/sign-fast-path.ts) against the Express sign routes it stands
 * in front of (`app.express`): every case is sent to both, and the answers must be the same
 * (status, headers but Date, body). The Express routes are the reference: they are what the
 * rest of the suite pinned before the fast path existed.
 */
import { request as httpRequest, type RequestListener } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { SignLinkClient } from '@pmm/core';
import { INTERNAL_TOKEN, USER, integrator, startFixture, testRegistry, type Fixture } from './support/fixture';

let f: Fixture;
const servers: Server[] = [];

beforeAll(async () => {
  f = await startFixture({ chains: [8453, 56] });
  await f.putIntegrator(integrator('off', { disabled: true }));
  await f.putIntegrator(integrator('bsc-only', { chains: [56] }));
  await f.putIntegrator('{"id":"broken", not json', 'broken');
});
// A failed count must not leave its spy on for the next case.
afterEach(() => jest.restoreAllMocks());
afterAll(async () => {
  for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  await f.close();
});

async function serve(app: RequestListener): Promise<number> {
  const s = createServer(app);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

interface Case {
  name: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in chunks without Content-Length. */
  chunked?: boolean;
}

async function send(port: number, c: Case) {
  return new Promise<{ status: number; headers: string[]; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: c.method ?? 'POST',
        path: c.path ?? '/v2/swap/sign',
        headers: {
          'X-Request-Id': 'rid-same',
          'X-Internal-Token': INTERNAL_TOKEN,
          'X-Integrator-Id': 'acme',
          'Content-Type': 'application/json',
          ...(c.chunked ? { 'Transfer-Encoding': 'chunked' } : {}),
          ...c.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.rawHeaders
              .reduce<string[]>((acc, v, i, all) => {
                if (i % 2 === 0 && !/^(date|keep-alive|connection)$/i.test(v))
                  acc.push(`${v.toLowerCase()}: ${all[i + 1]}`);
                return acc;
              }, [])
              .sort(),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    const body = c.body ?? '';
    if (c.chunked) {
      const b = Buffer.from(body);
      req.write(b.subarray(0, 5));
      req.end(b.subarray(5));
    } else req.end(body);
  });
}

type Answer = Awaited<ReturnType<typeof send>>;

/** Two answers to one case are the same; a generated request id differs per request, so then the rest is compared. */
function expectSameAnswer(c: Case, a: Answer, b: Answer): void {
  const generatedId = c.headers?.['X-Request-Id'] === 'bad id!';
  const strip = (r: Answer) =>
    generatedId
      ? {
          ...r,
          headers: r.headers.filter((h) => !h.startsWith('x-request-id')),
          body: r.body.replace(/"requestId":"[^"]+"/, ''),
        }
      : r;
  expect(strip(a)).toEqual(strip(b));
}

/** Counts the requests the Express part answers (`app(req, res)` calls `app.handle`). */
const spyOnExpress = () => jest.spyOn(f.app.express as unknown as { handle(): void }, 'handle');

const weth = testRegistry(8453).baseTokens[0]!.address;
const usdc = testRegistry(8453).quoteToken.address;
const valid = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ tokenIn: weth, tokenOut: usdc, fee: '30', userAddress: USER, amountIn: '1000', ...extra });

const CASES: Case[] = [
  { name: 'a valid v2 request', body: valid({ chainId: 8453 }) },
  { name: 'a valid v1 request', path: '/v1/swap/sign', body: valid() },
  { name: 'v1 with chainId', path: '/v1/swap/sign', body: valid({ chainId: 8453 }) },
  { name: 'no internal token', headers: { 'X-Internal-Token': '' }, body: valid() },
  { name: 'wrong internal token', headers: { 'X-Internal-Token': 'nope' }, body: 'not json' },
  { name: 'no integrator id', headers: { 'X-Integrator-Id': '' }, body: valid() },
  { name: 'malformed integrator id', headers: { 'X-Integrator-Id': 'a b' }, body: valid() },
  { name: 'unknown integrator', headers: { 'X-Integrator-Id': 'ghost' }, body: '{' },
  { name: 'disabled integrator', headers: { 'X-Integrator-Id': 'off' }, body: valid() },
  { name: 'malformed integrator record', headers: { 'X-Integrator-Id': 'broken' }, body: valid() },
  { name: 'integrator not enabled for the chain', headers: { 'X-Integrator-Id': 'bsc-only' }, body: valid() },
  { name: 'empty body', body: '' },
  { name: 'blank body', body: '  \n' },
  { name: 'malformed JSON', body: '{"a":' },
  { name: 'duplicate key', body: '{"fee":"1","fee":"2"}' },
  { name: 'an array', body: '[]' },
  { name: 'unsupported field', body: valid({ extra: 1 }) },
  { name: 'invalid fee', body: valid({ fee: '-1' }) },
  { name: 'not whitelisted', body: valid({ userAddress: `0x${'12'.repeat(20)}` }) },
  { name: 'unknown pair', body: valid({ tokenOut: `0x${'34'.repeat(20)}` }) },
  { name: 'unserved chain', body: valid({ chainId: 4663 }) },
  { name: 'over the limit by Content-Length', body: `{"fee":"${'1'.repeat(20_000)}"}` },
  { name: 'over the limit, chunked', chunked: true, body: `{"fee":"${'1'.repeat(20_000)}"}` },
  { name: 'a chunked valid request', chunked: true, body: valid() },
  { name: 'a gzip body (handed to Express)', headers: { 'Content-Encoding': 'gzip' }, body: gzipSync(valid()) },
  { name: 'a query string (handed to Express)', path: '/v2/swap/sign?x=1', body: valid() },
  { name: 'wrong method (handed to Express)', method: 'PUT', body: valid() },
  { name: 'no request id', headers: { 'X-Request-Id': 'bad id!' }, body: '{' },
];

describe('fast path and Express answer alike', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('behavior: %s', async (_name, c) => {
    const [fast, reference] = [await serve(f.app), await serve(f.app.express)];
    // Which side answered on the fast server: without this, a fast path that passed every
    // request on to Express would pass the comparison.
    const handledByExpress = spyOnExpress();
    const a = await send(fast, c);
    expect(handledByExpress).toHaveBeenCalledTimes(c.name.includes('(handed to Express)') ? 1 : 0);
    const b = await send(reference, c);
    expectSameAnswer(c, a, b);
    expect(a.status).toBeGreaterThan(0);
  });

  it('behavior: the fast path answers a valid request with a signed quote', async () => {
    const handledByExpress = spyOnExpress();
    const r = await send(await serve(f.app), { name: 'ok', body: valid() });
    expect(handledByExpress).not.toHaveBeenCalled();
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toHaveProperty('verificationData');
    expect(r.headers).toContain('cache-control: no-store');
  });
});

/**
 * The sign link (src/http/sign-link-handler.ts) against the same Express reference: each case
 * that can travel on the link (the transport's own cases, token, chunking, encodings, methods,
 * stay on HTTP) gets the same status, headers and body.
 */
describe('the sign link and Express answer alike', () => {
  const linkCases = CASES.filter(
    (c) =>
      c.method === undefined &&
      !c.chunked &&
      c.headers?.['X-Internal-Token'] === undefined &&
      c.headers?.['Content-Encoding'] === undefined &&
      !(c.path ?? '').includes('?'),
  );
  let link: SignLinkClient;
  let linkUrl: string;
  let reference: number;
  let signLink: { close(): Promise<void> };
  beforeAll(async () => {
    const server = createServer(f.app);
    servers.push(server);
    signLink = f.app.serveSignLink(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    linkUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    link = new SignLinkClient({
      url: linkUrl,
      headers: { 'x-internal-token': INTERNAL_TOKEN },
      maxAnswerBytes: 1 << 20,
    });
    reference = await serve(f.app.express);
  });
  afterAll(async () => {
    link.close();
    await signLink.close();
  });

  it('behavior: the link carries every case but the transport’s own', () => {
    expect(linkCases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(linkCases.map((c) => [c.name, c] as const))('behavior: %s', async (_name, c) => {
    const headers: Record<string, string> = { 'x-request-id': 'rid-same', 'x-integrator-id': 'acme' };
    for (const [name, value] of Object.entries(c.headers ?? {})) headers[name.toLowerCase()] = value;
    const answer = await link.request({ path: c.path ?? '/v2/swap/sign', headers }, Buffer.from(c.body ?? '')).answer;
    const viaLink = {
      status: answer.status,
      headers: Object.entries(answer.headers)
        .map(([name, value]) => `${name.toLowerCase()}: ${value}`)
        .sort(),
      body: answer.body.toString('utf8'),
    };
    expectSameAnswer(c, viaLink, await send(reference, c));
  });

  it('error: a link opened with a wrong internal token is refused, and nothing is signed', async () => {
    const wrong = new SignLinkClient({
      url: linkUrl,
      headers: { 'x-internal-token': 'nope' },
      maxAnswerBytes: 1 << 20,
    });
    await expect(
      wrong.request({ path: '/v2/swap/sign', headers: { 'x-integrator-id': 'acme' } }, Buffer.from(valid())).answer,
    ).rejects.toMatchObject({ code: 'LINK_REFUSED' });
  });
});
