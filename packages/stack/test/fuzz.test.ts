/**
 * Fuzz suite (issue 10): property-based requests against a gateway and a signer as `npm start`
 * runs them, each its own process (support/served-pair.ts: Redis seeded so that nothing has a
 * legitimate reason to be a 5xx).
 *
 * 1. HTTP fuzz, 10,000 cases: method, path, query string, headers (API key, Content-Type,
 *    Content-Encoding, request id, internal token for the signer) and body (mutated sign
 *    requests, duplicated keys, truncated or non-object JSON, random bytes, compressed or
 *    falsely compressed) sent to the gateway (and a fifth of them straight to the signer).
 * 2. Raw-socket fuzz: what Node's HTTP parser sees (request lines, header bytes, Content-Length
 *    and Transfer-Encoding combinations, chunking, truncation) sent to the served gateway.
 *
 * Asserted for every answer: never a 5xx; every error is exactly the envelope with a code of
 * the error table and its status, and `error.requestId` equals `X-Request-Id`; never a hang
 * (each exchange has a deadline). The seed is fixed (FUZZ_SEED overrides it) and printed with
 * the failing case, so that a failure replays the same requests (CONCURRENT at once: their
 * interleaving may differ).
 */
import { request as httpRequest, Agent, type IncomingHttpHeaders } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { ERROR_STATUS } from '@pmm/protocol';
import { parseRawResponses, rawExchange } from '@pmm/testkit';
import { CHAINS, USER, startServedPair, tokensOf, type ServedPair } from './support/served-pair';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const HTTP_RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const RAW_RUNS = Number(process.env.FUZZ_RAW_RUNS ?? 3_000);
/**
 * Requests in flight at once (each case is this many generated requests, sent together). With
 * the gateway and the signer in processes of their own, every request wakes two or three
 * processes: one at a time, that doubled the CPU per request against the former in-process
 * pair (3,000 requests: 5.4–5.9 s against 2.7–3.9 s) and this file took 20–27 s against
 * 12–17 s on the shared 2-core machine; 16 at once, where each wake-up serves several, 15–17 s.
 */
const CONCURRENT = 16;
/** Longer than any timeout the served pair has: an answer later than this is a hang. */
const DEADLINE_MS = 8_000;
/**
 * Each run, shrinking included, ends in time for its report: a failure found late shrank until
 * jest's 300 s timeout in one CI run, which then said only "timeout", not what failed.
 */
const WITHIN_THE_TEST_TIME = { interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true };

let pair: ServedPair;
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENT });

beforeAll(async () => {
  pair = await startServedPair({ requestTimeoutMs: 2_000 });
});
afterAll(async () => {
  agent.destroy();
  await pair?.close();
});

// ------------------------------------------------------------------ generators
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const anyJson = fc.jsonValue({ maxDepth: 3 });

const addresses = (): string[] =>
  CHAINS.flatMap((c) => {
    const t = tokensOf(c);
    return [t.quote, ...t.bases];
  });
const address = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...addresses(), USER, USER.toUpperCase().replace('0X', '0x')) },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.constantFrom('0x', `0x${'0'.repeat(40)}`, `0x${'g'.repeat(40)}`, '') },
);
const uintString = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 257n) - 1n }).map(String),
  fc.constantFrom('', '-1', '1e3', '0x10', ' 1', '01', '1.5', '９'),
  printable,
);
const field = <T>(gen: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: gen as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anyJson });
const signObject = fc
  .tuple(
    fc.record(
      {
        chainId: field(fc.constantFrom(0, 8453, 56, 4663, 1, -1, 1.5, 2 ** 53, '56')),
        tokenIn: field(address),
        tokenOut: field(address),
        fee: field(fc.oneof(fc.integer({ min: 0, max: 20_000 }).map(String), uintString)),
        userAddress: field(address),
        amountIn: field(uintString),
        minAmountOut: field(uintString),
      },
      { requiredKeys: [] },
    ),
    fc.option(fc.dictionary(printable, anyJson, { maxKeys: 2 }), { freq: 5 }),
  )
  .map(([known, extra]) => ({ ...known, ...(extra ?? {}) }));

/** Body text: valid-ish sign requests, and the ways a body goes wrong. */
const bodyText = fc.oneof(
  { weight: 6, arbitrary: signObject.map((o) => JSON.stringify(o)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(signObject, fc.constantFrom('fee', 'tokenIn', 'chainId', 'x'))
      .map(([o, k]) => JSON.stringify(o).replace(/^\{/, `{"${k}":"1",`)),
  },
  {
    weight: 1,
    arbitrary: signObject
      .map((o) => JSON.stringify(o))
      .chain((t) => fc.nat({ max: t.length }).map((cut) => t.slice(0, cut))),
  },
  { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '[]', '{', '{"a":1,"a":2}', '\u0000', '\ufeff{}') },
  { weight: 1, arbitrary: fc.constantFrom(`{"fee":"${'9'.repeat(17_000)}"}`, `"${'x'.repeat(16 * 1024)}"`) },
);

type Encoding = 'none' | 'gzip' | 'deflate' | 'br' | 'gzip-garbage' | 'gzip-truncated' | 'unknown';
const encoding = fc.oneof(
  { weight: 10, arbitrary: fc.constant<Encoding>('none') },
  {
    weight: 3,
    arbitrary: fc.constantFrom<Encoding>('gzip', 'deflate', 'br', 'gzip-garbage', 'gzip-truncated', 'unknown'),
  },
);

function encode(text: string, enc: Encoding, raw: Uint8Array | null): { body: Buffer; header?: string } {
  const bytes = raw ? Buffer.from(raw) : Buffer.from(text, 'utf8');
  switch (enc) {
    case 'none':
      return { body: bytes };
    case 'gzip':
      return { body: gzipSync(bytes), header: 'gzip' };
    case 'deflate':
      return { body: deflateSync(bytes), header: 'deflate' };
    case 'br':
      return { body: brotliCompressSync(bytes), header: 'br' };
    case 'gzip-garbage':
      return { body: bytes, header: 'gzip' };
    case 'gzip-truncated': {
      const z = gzipSync(bytes);
      return { body: z.subarray(0, Math.max(1, z.length >> 1)), header: 'gzip' };
    }
    case 'unknown':
      return { body: bytes, header: 'x-compress-9' };
  }
}

const pathArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('/v2/swap/sign', '/v1/swap/sign', '/v2/price', '/v1/price') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '/v2/openapi.json',
      '/healthz',
      '/docs',
      '/docs/openapi.json',
      '/docs/',
      '/docs/assets/',
      '/',
      '/v2/price/',
      '/V2/price',
      '/v2//price',
      '/v2/%70rice',
      '/v2/swap/sign/..',
      '/%',
      '/%zz',
      '/v3/price',
      '*',
    ),
  },
  { weight: 1, arbitrary: printable.map((s) => `/${encodeURI(s)}`) },
);
const queryArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom('chainId', 'chainid', 'chainId', 'x', ''),
          fc.oneof(fc.constantFrom('8453', '56', '4663', '0', '1', '-1', '', 'abc', '9'.repeat(40)), printable),
        ),
        { maxLength: 3 },
      )
      .map((kv) => `?${kv.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`),
  },
  { weight: 1, arbitrary: printable.map((s) => `?${encodeURI(s)}`) },
);

const requestArb = fc.record({
  target: fc.oneof(
    { weight: 4, arbitrary: fc.constant('gateway' as const) },
    { weight: 1, arbitrary: fc.constant('signer' as const) },
  ),
  route: fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(
        ['POST', '/v2/swap/sign'],
        ['POST', '/v1/swap/sign'],
        ['GET', '/v2/price'],
        ['GET', '/v1/price'],
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(
        fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND', 'TRACE'),
        pathArb,
      ),
    },
  ),
  query: queryArb,
  apiKey: fc.oneof(
    { weight: 8, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constantFrom('missing', '', 'pmm_not-a-key', 'x'.repeat(300)) },
    { weight: 1, arbitrary: printable },
  ),
  internal: fc.oneof({ weight: 8, arbitrary: fc.constant('valid') }, { weight: 1, arbitrary: printable }),
  contentType: fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        '',
      ),
    },
    { weight: 1, arbitrary: printable },
  ),
  requestId: fc.option(printable, { freq: 3 }),
  text: bodyText,
  raw: fc.option(fc.uint8Array({ maxLength: 64 }), { freq: 10 }),
  encoding,
  chunked: fc.boolean(),
  // Expect: 100-continue, the body sent with the head or only after the 100.
  expect: fc.option(fc.constantFrom('at-once' as const, 'after-100' as const), { freq: 5 }),
});
type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

// ------------------------------------------------------------------ sending and checking
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function send(r: FuzzRequest): Promise<Answer> {
  const port = r.target === 'gateway' ? pair.gatewayPort : pair.signerPort;
  const [method, path] = r.route as readonly [string, string];
  const headers: Record<string, string> = {};
  if (r.apiKey === 'valid') headers['X-API-KEY'] = pair.apiKey;
  else if (r.apiKey !== 'missing') headers['X-API-KEY'] = r.apiKey;
  if (r.target === 'signer') {
    headers['X-Internal-Token'] = r.internal === 'valid' ? pair.internalToken : r.internal;
    headers['X-Integrator-Id'] = 'fuzz';
  }
  if (r.contentType) headers['Content-Type'] = r.contentType;
  if (r.requestId !== null) headers['X-Request-Id'] = r.requestId;
  const hasBody = method !== 'GET' && method !== 'HEAD' ? true : r.text.length % 5 === 0;
  const { body, header } = hasBody ? encode(r.text, r.encoding, r.raw) : { body: Buffer.alloc(0), header: undefined };
  if (header) headers['Content-Encoding'] = header;
  // Framed explicitly: Node's client sends a GET/HEAD body unframed (bytes the server then
  // reads as the next request), which would test the client, not the server.
  if (hasBody) {
    if (r.chunked) headers['Transfer-Encoding'] = 'chunked';
    else headers['Content-Length'] = String(body.length);
    if (r.expect !== null) headers.Expect = '100-continue';
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path: `${path}${r.query}`, headers, agent, timeout: DEADLINE_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${DEADLINE_MS} ms (a hang)`)));
    req.on('error', reject);
    if (!hasBody) req.end();
    else if (r.expect === 'after-100') req.once('continue', () => req.end(body));
    else req.end(body);
  });
}

/** Throws unless `a` is a well-formed answer: no 5xx, an exact envelope for every error. */
export function checkAnswer(a: { status: number; headers: Record<string, unknown>; body: Buffer }, head = false): void {
  const rid = a.headers['x-request-id'];
  if (a.status >= 500) throw new Error(`a ${a.status}: ${a.body.toString('utf8').slice(0, 300)}`);
  if (typeof rid !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(rid))
    throw new Error(`X-Request-Id missing or unsafe: ${String(rid)}`);
  if (a.status < 400 || head) return;
  if (!String(a.headers['content-type']).startsWith('application/json'))
    throw new Error(`error without a JSON content type: ${String(a.headers['content-type'])}`);
  const body = JSON.parse(a.body.toString('utf8')) as { error?: Record<string, unknown> };
  const keys = Object.keys(body).join(',');
  const errorKeys = Object.keys(body.error ?? {})
    .sort()
    .join(',');
  if (keys !== 'error' || errorKeys !== 'code,message,requestId')
    throw new Error(`not the envelope: ${a.body.toString('utf8').slice(0, 300)}`);
  const { code, message, requestId } = body.error!;
  const expected = ERROR_STATUS[code as keyof typeof ERROR_STATUS];
  if (expected !== a.status) throw new Error(`code ${String(code)} with status ${a.status} (table: ${expected})`);
  if (typeof message !== 'string' || message.length === 0) throw new Error('empty message');
  if (requestId !== rid) throw new Error(`error.requestId ${String(requestId)} ≠ X-Request-Id ${rid}`);
}

/**
 * A property whose every case is CONCURRENT generated requests sent at once, each checked on its
 * own; all are answered before a failure is reported, which names the request that failed.
 */
function together<T>(arb: fc.Arbitrary<T>, check: (one: T) => Promise<void>) {
  return fc.asyncProperty(fc.array(arb, { minLength: CONCURRENT, maxLength: CONCURRENT }), async (all) => {
    const outcomes = await Promise.allSettled(all.map(check));
    outcomes.forEach((o, i) => {
      if (o.status === 'rejected')
        throw new Error(
          `request ${i + 1} of ${CONCURRENT}: ${o.reason instanceof Error ? o.reason.message : String(o.reason)}`,
        );
    });
  });
}

function report<T>(name: string, out: fc.RunDetails<T>): void {
  if (!out.failed) return;
  // fast-check's own report (seed, path, shrunk counterexample, the error), and how to replay it.
  console.error(`${name} failed: seed ${out.seed}, path ${out.counterexamplePath}; replay with FUZZ_SEED=${out.seed}`);
  const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
  throw new Error(`${fc.defaultReportMessage(out) ?? `${name} failed (seed ${out.seed})`}\ncause: ${cause}`);
}

// ------------------------------------------------------------------ raw socket
const EOL = fc.oneof(
  { weight: 12, arbitrary: fc.constant('\r\n') },
  { weight: 1, arbitrary: fc.constantFrom('\n', '\r', '') },
);
/** Any byte, biased towards the ones parsers trip on. */
const nastyByte = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constantFrom(0x00, 0x0a, 0x0d, 0x09, 0x7f, 0x80, 0xff, 0x3a, 0x20) },
);
const nastyText = fc.array(nastyByte, { maxLength: 30 }).map((b) => Buffer.from(b).toString('latin1'));
const rawMethod = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
  { weight: 1, arbitrary: fc.constantFrom('PUT', 'OPTIONS', 'CONNECT', 'get', 'G ET', '', 'PRI', 'POST\u0000') },
  { weight: 1, arbitrary: nastyText },
);
const rawTarget = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('/v2/price', '/v2/price?chainId=56', '/v2/swap/sign', '/v1/swap/sign', '/v1/price'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('*', 'http://127.0.0.1/v2/price', '//v2/price', '/%', '/\u00ff', '', 'example.com:443'),
  },
  { weight: 1, arbitrary: nastyText },
);
const rawVersion = fc.oneof(
  { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
  { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', '', 'http/1.1', 'HTTP/1') },
);
const contentLengthValue = fc.oneof(
  fc.nat({ max: 300 }).map(String),
  fc.constantFrom('-1', '1,2', 'abc', '99999999999999999999', ' 5', '0x10', ''),
);
const headerLine = fc.oneof(
  { weight: 4, arbitrary: fc.constant<[string, string]>(['X-API-KEY', 'valid']) },
  { weight: 3, arbitrary: contentLengthValue.map((v): [string, string] => ['Content-Length', v]) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('chunked', 'gzip, chunked', 'chunked, gzip', 'identity', 'chunked\u0000', 'xchunked')
      .map((v): [string, string] => ['Transfer-Encoding', v]),
  },
  { weight: 1, arbitrary: fc.constantFrom('100-continue', 'other', '').map((v): [string, string] => ['Expect', v]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('application/json', 'text/plain').map((v): [string, string] => ['Content-Type', v]),
  },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'br', 'x').map((v): [string, string] => ['Content-Encoding', v]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('close', 'keep-alive', 'upgrade').map((v): [string, string] => ['Connection', v]),
  },
  { weight: 1, arbitrary: fc.constant<[string, string]>(['Upgrade', 'websocket']) },
  { weight: 1, arbitrary: fc.constantFrom(100, 17_000).map((n): [string, string] => ['X-Long', 'a'.repeat(n)]) },
  { weight: 2, arbitrary: fc.tuple(nastyText, nastyText) },
);
const chunk = fc.oneof(
  { weight: 4, arbitrary: printable.map((t) => `${t.length.toString(16)}\r\n${t}\r\n`) },
  { weight: 1, arbitrary: fc.tuple(nastyText, nastyText).map(([size, data]) => `${size}\r\n${data}\r\n`) },
  // Chunk extensions over Node's 16 KiB limit: 413.
  { weight: 1, arbitrary: fc.constantFrom(10, 17_000).map((n) => `1;${'e'.repeat(n)}\r\na\r\n`) },
);
const rawBody = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: bodyText },
  {
    weight: 2,
    arbitrary: fc.array(chunk, { maxLength: 3 }).chain((cs) => fc.constantFrom(`${cs.join('')}0\r\n\r\n`, cs.join(''))),
  },
  { weight: 1, arbitrary: nastyText },
);
const rawRequest = fc
  .record({
    method: rawMethod,
    target: rawTarget,
    version: rawVersion,
    headers: fc.array(fc.tuple(headerLine, EOL), { maxLength: 4 }),
    host: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    lineEnd: EOL,
    body: rawBody,
    pipelined: fc.boolean(),
  })
  .map((r) => {
    const headers = r.headers
      .map(([[name, value], eol]) => `${name}: ${value === 'valid' ? pair.apiKey : value}${eol}`)
      .join('');
    const one = `${r.method} ${r.target} ${r.version}${r.lineEnd}${r.host ? 'Host: x\r\n' : ''}${headers}\r\n${r.body}`;
    // A second, well-formed request behind it: is it answered, or the connection cleanly closed?
    const second = `GET /v2/price HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${pair?.apiKey ?? ''}\r\n\r\n`;
    return Buffer.from(r.pipelined ? one + second : one, 'latin1');
  });

describe('fuzz', () => {
  it(`property: ${HTTP_RUNS} generated HTTP requests to the gateway and signer: never a 5xx, always the envelope, never a hang (seed ${SEED})`, async () => {
    const statuses = new Map<number, number>();
    const out = await fc.check(
      together(requestArb, async (r) => {
        const a = await send(r);
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        checkAnswer(a, r.route[0] === 'HEAD');
      }),
      { seed: SEED, numRuns: Math.ceil(HTTP_RUNS / CONCURRENT), ...WITHIN_THE_TEST_TIME },
    );
    console.log(
      `HTTP fuzz, seed ${SEED}: ${out.numRuns * CONCURRENT} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    report('HTTP fuzz', out);
    // The generators must reach the interesting answers, not only 401s and 404s.
    for (const s of [200, 400, 401, 404, 405, 413, 422])
      expect({ status: s, seen: (statuses.get(s) ?? 0) > 0 }).toEqual({ status: s, seen: true });
  }, 300_000);

  it(`property: ${RAW_RUNS} generated raw requests to the served gateway: every answer well-formed and in the envelope, never a 5xx, never a hang (seed ${SEED})`, async () => {
    const statuses = new Map<number, number>();
    let silent = 0;
    const out = await fc.check(
      together(rawRequest, async (bytes) => {
        // FIN after the request: the server must answer what it got and close, not wait.
        const ex = await rawExchange(pair.gatewayPort, bytes, { timeoutMs: DEADLINE_MS, end: true });
        if (!ex.closed) throw new Error(`connection still open after ${DEADLINE_MS} ms (a hang)`);
        const { responses, rest } = parseRawResponses(ex.received);
        if (rest.length > 0)
          throw new Error(
            `bytes that are not a complete response: ${JSON.stringify(rest.toString('latin1').slice(0, 200))}`,
          );
        if (responses.length === 0) silent++;
        for (const r of responses) {
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status >= 200) checkAnswer(r);
        }
      }),
      { seed: SEED, numRuns: Math.ceil(RAW_RUNS / CONCURRENT), ...WITHIN_THE_TEST_TIME },
    );
    console.log(
      `raw fuzz, seed ${SEED}: ${out.numRuns * CONCURRENT} exchanges, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, closed without an answer ${silent}`,
    );
    report('raw fuzz', out);
    // (408 takes a timeout to happen: the timeout tests cover it.)
    for (const s of [200, 400, 401, 404, 405, 413, 417, 431])
      expect({ status: s, seen: (statuses.get(s) ?? 0) > 0 }).toEqual({ status: s, seen: true });
  }, 300_000);
});
