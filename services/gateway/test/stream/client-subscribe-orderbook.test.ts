/**
 * The SDK's subscribeOrderbook (@pmm/client) against the real gateway stream (createApp, real
 * Redis): the current book and the next ones, reconnect with Last-Event-ID after the server
 * drops the connection (no book delivered twice), `unavailable`, a refused key (no retry), and
 * a 429 over the stream limit retried after Retry-After. Among the gateway's tests because it
 * runs on the gateway's harness; a package's tests do not reach into a service.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PmmClient, type Orderbook, type PmmApiError } from '@pmm/client';
import type { Gateway } from '@pmm/gateway';
import { until } from '@pmm/testkit';
import { bookBody, harness, type Harness } from '../support/harness';

let h: Harness;
let gw: Gateway;
let server: Server;
let base: string;
let key: string;
const requests: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway({ streamsPerKey: 1, streamLeaseMs: 1_000 });
  server = createServer((req, res) => {
    requests.push(req.headers);
    gw.app(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  key = await h.apiKey();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await h.cleanup();
});

describe('PmmClient.subscribeOrderbook', () => {
  it('behavior: books in order; after a dropped connection it reconnects with Last-Event-ID and delivers no book twice', async () => {
    await h.putBook(56, bookBody(56, 10));
    const books: Orderbook[] = [];
    const sub = new PmmClient({ baseUrl: base, apiKey: key }).subscribeOrderbook(56, (b) => books.push(b), {
      minReconnectMs: 50,
    });
    try {
      await until(() => books.length === 1);
      expect(books[0]).toEqual(JSON.parse(bookBody(56, 10)));
      await h.putBook(56, bookBody(56, 11));
      await until(() => books.length === 2);

      const before = requests.length;
      server.closeAllConnections(); // the gateway instance goes away mid-stream
      await until(() => requests.length > before);
      expect(requests.at(-1)!['last-event-id']).toBe('11');
      await h.putBook(56, bookBody(56, 12));
      await until(() => books.length === 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(books.map((b) => b.blockNumber)).toEqual([10, 11, 12]);
      expect(sub.lastEventId).toBe(12);
    } finally {
      sub.close();
      await sub.done;
    }
  });

  it('behavior: unavailable is reported as SERVICE_UNAVAILABLE, then books resume', async () => {
    await h.putBook(4663, bookBody(4663, 20));
    const books: number[] = [];
    const gone: PmmApiError[] = [];
    const sub = new PmmClient({ baseUrl: base, apiKey: key }).subscribeOrderbook(
      4663,
      (b) => books.push(b.blockNumber),
      { onUnavailable: (e) => gone.push(e) },
    );
    try {
      await until(() => books.length === 1);
      await h.dropBook(4663);
      await until(() => gone.length === 1);
      expect(gone[0]).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(gone[0]!.requestId).toBeDefined();
      await h.putBook(4663, bookBody(4663, 21));
      await until(() => books.length === 2);
      expect(books).toEqual([20, 21]);
    } finally {
      sub.close();
      await sub.done;
    }
  });

  it('error: a refused key is reported once and the subscription stops (no retry)', async () => {
    const errors: [PmmApiError, boolean][] = [];
    const sub = new PmmClient({ baseUrl: base, apiKey: 'pmm_not-a-key' }).subscribeOrderbook(8453, () => undefined, {
      onError: (e, retry) => errors.push([e, retry]),
      minReconnectMs: 10,
    });
    await sub.done;
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect(errors[0]![1]).toBe(false);
  });

  it('behavior: over the per-key stream limit it retries after Retry-After and connects once a slot frees', async () => {
    await h.putBook(8453, bookBody(8453, 30));
    const client = new PmmClient({ baseUrl: base, apiKey: await h.apiKey() });
    const first: number[] = [];
    const second: number[] = [];
    const errors: PmmApiError[] = [];
    const a = client.subscribeOrderbook(8453, (b) => first.push(b.blockNumber));
    await until(() => first.length === 1);
    const b = client.subscribeOrderbook(8453, (bk) => second.push(bk.blockNumber), {
      onError: (e) => errors.push(e),
    });
    try {
      await until(() => errors.length >= 1);
      expect(errors[0]).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 1_000 });
      a.close();
      await a.done;
      await until(() => second.length === 1, 5_000);
      expect(second).toEqual([30]);
    } finally {
      a.close();
      b.close();
      await b.done;
    }
  });
});
