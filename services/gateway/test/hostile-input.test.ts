/**
 * The gateway against a hostile or slow client (issue 10): /v1 keeps its documented query
 * leniency, a body shorter than its Content-Length is the client's 408 (not a 503), and the
 * parser-level answers come in the envelope through the served gateway.
 */
import request from 'supertest';
import { listen, type Served } from '@pmm/core';
import { gatewayTimeouts, type Gateway } from '@pmm/gateway';
import { parseRawResponses, rawExchange } from '@pmm/testkit';
import { bookBody, call, harness, type Harness } from './support/harness';
import { fakeSigner, type FakeSigner } from './support/fake-signer';

let h: Harness;
let gw: Gateway;
let signer: FakeSigner;
let key: string;
let served: Served;

beforeAll(async () => {
  h = await harness();
  signer = await fakeSigner();
  gw = await h.gateway({ signerUrl: signer.url, requestTimeoutMs: 600 });
  key = await h.apiKey();
  served = await listen(gw.app, 0, '127.0.0.1', { timeouts: gatewayTimeouts({ requestTimeoutMs: 600 }) });
});
afterAll(async () => {
  served.server.closeAllConnections();
  await served.close();
  await h.cleanup();
  await signer.close();
});

function envelope(raw: Buffer) {
  const { responses } = parseRawResponses(raw);
  expect(responses).toHaveLength(1);
  const r = responses[0]!;
  return { status: r.status, headers: r.headers, error: JSON.parse(r.body.toString('utf8')).error };
}

it('behavior: /v1/price ignores any query, as the earlier form documented', async () => {
  const stored = await h.putBook(8453, bookBody(8453, 21));
  const res = await call(request(gw.app).get('/v1/price?chainid=56&foo=bar').set('X-API-KEY', key));
  expect(res.status).toBe(200);
  expect(JSON.parse(res.text)).toEqual(JSON.parse(stored.replace('"chainId":8453,', '')));
});

it('error: a sign body shorter than its Content-Length is 408 REQUEST_TIMEOUT (not 503), nothing reaches the signer (finding 3)', async () => {
  signer.requests.length = 0;
  const ex = await rawExchange(
    served.port,
    `POST /v2/swap/sign HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\nX-Request-Id: short-1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"fee":"30"`,
    { timeoutMs: 5_000 },
  );
  const r = envelope(ex.received);
  expect({ status: r.status, code: r.error.code, rid: r.error.requestId, header: r.headers['x-request-id'] }).toEqual({
    status: 408,
    code: 'REQUEST_TIMEOUT',
    rid: 'short-1',
    header: 'short-1',
  });
  expect(r.headers.connection).toBe('close');
  expect(ex.closed).toBe(true);
  expect(signer.requests).toHaveLength(0);
});

it('error: headers that never finish are 408 REQUEST_TIMEOUT in the envelope, within the headers timeout and 1 s', async () => {
  const ex = await rawExchange(served.port, `GET /v2/price HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\n`, {
    timeoutMs: 5_000,
  });
  const r = envelope(ex.received);
  expect({ status: r.status, code: r.error.code }).toEqual({ status: 408, code: 'REQUEST_TIMEOUT' });
  expect(r.headers['x-request-id']).toBe(r.error.requestId);
  expect(ex.elapsedMs).toBeLessThan(600 + 1_000 + 500);
});

it('error: a request line Node cannot parse is 400 MALFORMED_REQUEST in the envelope (finding 2)', async () => {
  const ex = await rawExchange(served.port, 'GET /v2/price HTTP/1.1\r\nHost: x\r\nX-API-KEY: a\x00b\r\n\r\n');
  const r = envelope(ex.received);
  expect({ status: r.status, code: r.error.code }).toEqual({ status: 400, code: 'MALFORMED_REQUEST' });
});
