/**
 * The price stream's bytes on the wire, read from a raw TCP socket against a real Redis: the
 * gateway writes each event straight to the socket with its own chunk framing (see
 * stream-writer.ts), so these tests decode the HTTP/1.1 framing independently and check that
 * it stays valid: one event per chunk, the closing chunk when the stream ends, the connection
 * reusable afterwards; an HTTP/1.0 client gets the events unframed; and a stream requested
 * behind another on the same connection (pipelining) never mixes its bytes into the first.
 */
import { connect, type Socket } from 'node:net';
import { until } from '@pmm/testkit';
import type { Gateway } from '@pmm/gateway';
import { bookBody, harness, hashApiKey, type Harness } from '../support/harness';
import { KEY_RECHECK_MS } from '../../src/stream/price-stream';

let h: Harness;
let gw: Gateway;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  port = Number(new URL(await h.listen(gw.app)).port);
});
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});
afterAll(() => h.cleanup());

/** A raw connection that keeps every byte it receives. */
function rawConnection(): { socket: Socket; received: () => Buffer } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  const parts: Buffer[] = [];
  socket.on('data', (d: Buffer) => parts.push(d));
  socket.on('error', () => undefined);
  return { socket, received: () => Buffer.concat(parts) };
}

const get = (path: string, key: string, version = '1.1') =>
  `GET ${path} HTTP/${version}\r\nHost: 127.0.0.1\r\nX-API-KEY: ${key}\r\nAccept: text/event-stream\r\n\r\n`;

interface WireResponse {
  head: string;
  /** The chunks' payloads, in order (a sized body is one chunk). */
  chunks: string[];
  /** The closing zero-length chunk was received. */
  complete: boolean;
}

/**
 * Decodes back-to-back HTTP/1.1 responses (chunked, or with a Content-Length); throws on anything that is not valid
 * framing (a stray byte between chunks, a size line that is not hex, a chunk without CRLF).
 */
function decodeChunked(bytes: Buffer): WireResponse[] {
  const text = bytes.toString('latin1');
  const out: WireResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const head = text.slice(at, headEnd);
    if (!head.startsWith('HTTP/1.1 '))
      throw new Error(`not a response head at ${at}: ${JSON.stringify(head.slice(0, 40))}`);
    const res: WireResponse = { head, chunks: [], complete: false };
    out.push(res);
    at = headEnd + 4;
    const length = /\r\ncontent-length: ([0-9]+)/i.exec(head);
    if (length) {
      // A whole body (an ordinary response on the same connection): kept as one chunk.
      const end = at + Number(length[1]);
      if (bytes.length < end) return out;
      res.chunks.push(bytes.subarray(at, end).toString('utf8'));
      res.complete = true;
      at = end;
      continue;
    }
    if (!/\r\ntransfer-encoding: chunked/i.test(head)) throw new Error(`neither chunked nor sized: ${head}`);
    for (;;) {
      const eol = text.indexOf('\r\n', at);
      if (eol === -1) return out;
      const sizeLine = text.slice(at, eol);
      if (!/^[0-9a-f]+$/i.test(sizeLine)) throw new Error(`bad chunk size line ${JSON.stringify(sizeLine)}`);
      const size = parseInt(sizeLine, 16);
      if (text.length < eol + 2 + size + 2) return out;
      const payload = bytes.subarray(eol + 2, eol + 2 + size).toString('utf8');
      if (text.slice(eol + 2 + size, eol + 4 + size) !== '\r\n') throw new Error('chunk without its CRLF');
      at = eol + 4 + size;
      if (size === 0) {
        res.complete = true;
        break;
      }
      res.chunks.push(payload);
    }
  }
  return out;
}

const bookEvent = (blockNumber: number, body: string) => `event: book\nid: ${blockNumber}\ndata: ${body}\n\n`;

async function revoke(key: string): Promise<void> {
  const found = await h.store.lookupHash(hashApiKey(key));
  await h.store.revokeKey(found!.key.keyId);
}

const waitMs = 3 * KEY_RECHECK_MS;

describe('GET /v2/price/stream: bytes on the wire', () => {
  it('behavior: HTTP/1.1 gets one event per chunk, the closing chunk at the end, and the connection stays usable', async () => {
    const key = await h.apiKey();
    const first = await h.putBook(8453, bookBody(8453, 50));
    const { socket, received } = rawConnection();
    socket.write(get('/v2/price/stream?chainId=8453', key));
    await until(() => (decodeChunked(received())[0]?.chunks.length ?? 0) >= 1);
    const second = await h.putBook(8453, bookBody(8453, 51));
    await until(() => decodeChunked(received())[0]!.chunks.length >= 2);
    const [stream] = decodeChunked(received());
    expect(stream!.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(stream!.head).toMatch(/\r\ncontent-type: text\/event-stream; charset=utf-8/i);
    expect(stream!.chunks).toEqual([bookEvent(50, first), bookEvent(51, second)]);

    // The server ends the stream (its key is revoked): the closing chunk follows the events,
    // and the same connection then serves the next request.
    await revoke(key);
    await until(() => decodeChunked(received())[0]!.complete, waitMs);
    socket.write(get('/v2/price?chainId=8453', await h.apiKey()));
    await until(() => decodeChunked(received()).length === 2 && decodeChunked(received())[1]!.complete);
    const [, price] = decodeChunked(received());
    expect(price!.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(price!.chunks.join('')).toBe(second);
  });

  it('behavior: HTTP/1.0 gets the events without chunk framing', async () => {
    const key = await h.apiKey();
    const first = await h.putBook(56, bookBody(56, 60));
    const { socket, received } = rawConnection();
    socket.write(get('/v2/price/stream?chainId=56', key, '1.0'));
    const body = () => {
      const text = received().toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      return end === -1 ? '' : text.slice(end + 4);
    };
    await until(() => body().length > 0);
    const second = await h.putBook(56, bookBody(56, 61));
    await until(() => body().includes('id: 61'));
    const text = received().toString('utf8');
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.slice(0, text.indexOf('\r\n\r\n'))).not.toMatch(/transfer-encoding/i);
    expect(body()).toBe(bookEvent(60, first) + bookEvent(61, second));
  });

  it('behavior: a stream pipelined behind another never mixes into it; it starts once the first ends', async () => {
    const [keyA, keyB] = [await h.apiKey(), await h.apiKey()];
    await h.putBook(4663, bookBody(4663, 70));
    const { socket, received } = rawConnection();
    socket.write(get('/v2/price/stream?chainId=4663', keyA) + get('/v2/price/stream?chainId=4663', keyB));
    await until(() => (decodeChunked(received())[0]?.chunks.length ?? 0) >= 1);
    const b71 = await h.putBook(4663, bookBody(4663, 71));
    await until(() => decodeChunked(received())[0]!.chunks.length >= 2);
    // Only the first response so far, every chunk one whole event of it.
    expect(decodeChunked(received())).toHaveLength(1);

    await revoke(keyA);
    await until(() => decodeChunked(received()).length === 2, waitMs);
    const b72 = await h.putBook(4663, bookBody(4663, 72));
    await until(() => decodeChunked(received())[1]!.chunks.some((c) => c.includes('id: 72')));
    const [a, b] = decodeChunked(received());
    expect(a!.complete).toBe(true);
    expect(a!.chunks.at(-1)).toBe(bookEvent(71, b71));
    expect(b!.head).toMatch(/^HTTP\/1\.1 200 /);
    // The second stream's events waited in its own response, then continue as usual.
    expect(b!.chunks.at(-1)).toBe(bookEvent(72, b72));
    for (const chunk of b!.chunks) expect(chunk).toMatch(/^event: book\nid: 7[0-2]\ndata: /);
  });
});
