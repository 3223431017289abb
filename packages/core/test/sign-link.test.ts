/**
 * The sign link end to end over real sockets: core's server on a node:http server, core's
 * client, and raw sockets playing a hostile or broken peer.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { ApiError } from '@pmm/protocol';
import { until } from '@pmm/testkit';
import {
  SIGN_LINK_PATH,
  SIGN_LINK_PROTOCOL,
  SignLinkClient,
  createLogger,
  serveSignLink,
  type LinkAnswer,
  type LinkRequest,
  type SignLinkServer,
} from '../src';
import { FrameReader, encodeFrame } from '../src/sign-link/frames';

const TOKEN = 'link-test-token';
const logger = createLogger({ service: 'link-test', silent: true });

interface Started {
  server: Server;
  link: SignLinkServer;
  url: string;
  port: number;
  /** Answers waiting for `release`. */
  held: ((answer?: LinkAnswer) => void)[];
}

const echo = (request: LinkRequest, status = 200): LinkAnswer => ({
  status,
  headers: { 'x-path': request.path, 'x-id': request.headers['x-request-id'] ?? '' },
  body: request.body,
});

/** A link server: echoes the body; holds the answer when the body is "hold"; throws on "throw". */
async function start(port = 0): Promise<Started> {
  const server = createServer((_req, res) => res.end('plain http'));
  const held: Started['held'] = [];
  const link = serveSignLink(server, {
    authorize: (headers) => {
      if (headers['x-internal-token'] !== TOKEN) throw new ApiError('UNAUTHORIZED', 'internal token required');
    },
    handle: (request) => {
      const text = request.body.toString();
      if (text === 'throw') throw new Error('handler bug');
      if (text === 'hold') return new Promise<LinkAnswer>((r) => held.push((a) => r(a ?? echo(request))));
      return echo(request);
    },
    maxBodyBytes: 1024,
    logger,
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const actual = (server.address() as AddressInfo).port;
  return { server, link, url: `http://127.0.0.1:${actual}`, port: actual, held };
}

const stop = (s: Started) =>
  Promise.all([s.link.close(), new Promise<void>((r) => s.server.close(() => r()))]).then(() => undefined);

const client = (url: string, token = TOKEN) =>
  new SignLinkClient({ url, headers: { 'x-internal-token': token }, maxAnswerBytes: 4096 });

const ask = (c: SignLinkClient, body: string, id = 'r1', path = '/v2/swap/sign') =>
  c.request({ path, headers: { 'x-request-id': id } }, Buffer.from(body));

/** A raw upgraded socket (what a hostile or buggy peer would hold). */
async function rawLink(port: number, token = TOKEN): Promise<{ socket: Socket; response: string }> {
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `GET ${SIGN_LINK_PATH} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${SIGN_LINK_PROTOCOL}\r\nx-internal-token: ${token}\r\n\r\n`,
  );
  const response = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
  return { socket, response };
}

const closed = (socket: Socket) => new Promise<void>((r) => (socket.destroyed ? r() : socket.once('close', () => r())));

let s: Started;
beforeEach(async () => {
  s = await start();
});
afterEach(async () => {
  for (const release of s.held) release();
  await stop(s);
});

describe('the sign link', () => {
  it('behavior: many requests share one link; each answer finds its request, in whatever order', async () => {
    const c = client(s.url);
    const slow = ask(c, 'hold', 'slow');
    const fast = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(c, `body-${i}`, `id-${i}`).answer));
    fast.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe(`body-${i}`);
      expect(answer.headers).toEqual({ 'x-path': '/v2/swap/sign', 'x-id': `id-${i}` });
    });
    expect(s.link.open).toBe(1);
    s.held.shift()!();
    expect((await slow.answer).headers['x-id']).toBe('slow');
    c.close();
  });

  it('error: a wrong internal token is refused with the envelope over HTTP, and the client says LINK_REFUSED', async () => {
    const { socket, response } = await rawLink(s.port, 'wrong');
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(response).toContain('"code":"UNAUTHORIZED"');
    await closed(socket);
    const c = client(s.url, 'wrong');
    await expect(ask(c, 'x').answer).rejects.toMatchObject({ code: 'LINK_REFUSED' });
    expect(s.link.open).toBe(0);
  });

  it('error: other paths and protocols are refused; plain HTTP on the same server is untouched', async () => {
    for (const [path, protocol, status] of [
      ['/elsewhere', SIGN_LINK_PROTOCOL, 404],
      [SIGN_LINK_PATH, 'websocket', 400],
    ] as const) {
      const socket = connect(s.port, '127.0.0.1');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\n\r\n`);
      const text = await new Promise<string>((r) => socket.once('data', (d: Buffer) => r(d.toString())));
      expect(text.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      await closed(socket);
    }
    expect(await (await fetch(s.url)).text()).toBe('plain http');
  });

  it('error: a malformed frame (oversized, bad head) closes that link only; the server keeps serving', async () => {
    const oversized = await rawLink(s.port);
    expect(oversized.response).toMatch(/^HTTP\/1\.1 101 /);
    const big = Buffer.alloc(4);
    big.writeUInt32BE(10 * 1024 * 1024, 0);
    oversized.socket.write(big);
    await closed(oversized.socket);

    const badHead = await rawLink(s.port);
    badHead.socket.write(encodeFrame(1, '{"path":1}', Buffer.from('x')));
    await closed(badHead.socket);

    const c = client(s.url);
    expect((await ask(c, 'still fine').answer).status).toBe(200);
    c.close();
  });

  it('error: a handler that throws answers 500 in the envelope; the link stays open', async () => {
    const c = client(s.url);
    const answer = await ask(c, 'throw', 'boom').answer;
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body.toString())).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'internal error', requestId: 'boom' },
    });
    expect((await ask(c, 'after').answer).status).toBe(200);
    expect(s.link.open).toBe(1);
    c.close();
  });

  it('error: nothing listening is a socket error code at once; a restarted server is used again', async () => {
    const port = s.port;
    await stop(s);
    const c = client(`http://127.0.0.1:${port}`);
    await expect(ask(c, 'x').answer).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    s = await start(port);
    expect((await ask(c, 'back').answer).body.toString()).toBe('back');
    c.close();
  });

  it('error: the link breaking rejects every request waiting on it (LINK_CLOSED); the next opens a new link', async () => {
    const sockets = new Set<Socket>();
    s.server.on('connection', (socket: Socket) => sockets.add(socket));
    const c = client(s.url);
    const waiting = [ask(c, 'hold', 'a').answer, ask(c, 'hold', 'b').answer];
    await until(() => s.held.length === 2);
    // As a crashed signer would: the connection is gone, with two answers owed.
    for (const socket of sockets) socket.destroy();
    for (const w of waiting) await expect(w).rejects.toMatchObject({ code: 'LINK_CLOSED' });
    expect((await ask(c, 'next').answer).body.toString()).toBe('next');
    c.close();
  });

  it('error: a request given up on (cancel) while the link answered nothing closes that link as stuck', async () => {
    const c = client(s.url);
    const stuck = ask(c, 'hold', 'stuck');
    await until(() => s.held.length === 1);
    stuck.cancel();
    await until(() => s.link.open === 0);
    // A late answer to a cancelled request is dropped; a new request opens a fresh link.
    expect((await ask(c, 'fresh').answer).body.toString()).toBe('fresh');
    c.close();
  });

  it('behavior: a cancel while other answers keep arriving leaves the link open', async () => {
    const c = client(s.url);
    const slow = ask(c, 'hold', 'slow');
    await until(() => s.held.length === 1);
    expect((await ask(c, 'between').answer).status).toBe(200);
    slow.cancel();
    expect((await ask(c, 'after').answer).status).toBe(200);
    expect(s.link.open).toBe(1);
    c.close();
  });

  it('behavior: closing drains: what is in flight is answered, what arrives meanwhile gets 503, then the link ends', async () => {
    const c = client(s.url);
    const inFlight = ask(c, 'hold', 'in-flight');
    await until(() => s.held.length === 1);
    const closing = s.link.close();
    const late = await ask(c, 'late', 'late').answer;
    expect(late.status).toBe(503);
    expect(late.headers['Retry-After']).toBe('1');
    expect(JSON.parse(late.body.toString()).error.code).toBe('SERVICE_UNAVAILABLE');
    s.held.shift()!();
    expect((await inFlight.answer).status).toBe(200);
    await closing;
    await until(() => s.link.open === 0);
    c.close();
  });
  it('behavior: a gateway that does not read its answers stops the signer reading its requests; nothing is lost', async () => {
    const { socket } = await rawLink(s.port);
    socket.pause();
    // 20 MB of requests, each answered with its own 1000 bytes: far more than the kernel's buffers.
    const count = 20_000;
    const frame = encodeFrame(1, '{"path":"/v2/swap/sign","headers":{}}', Buffer.alloc(1000, 'a'));
    for (let i = 0; i < count; i++) socket.write(frame);
    await new Promise((r) => setTimeout(r, 1000));
    // Had the signer read on, the answers (as large as the requests) would pile up in its memory.
    expect(socket.writableLength).toBeGreaterThan(frame.length * count * 0.5);
    const reader = new FrameReader(4096);
    let answered = 0;
    socket.on('data', (chunk: Buffer) => (answered += reader.push(chunk).length));
    socket.resume();
    await until(() => answered === count, 20_000);
    socket.destroy();
  });

  it('behavior: closing ends a link whose gateway never closes its side (gone, or stuck) instead of waiting for it', async () => {
    const socket = connect({ port: s.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.write(
      `GET ${SIGN_LINK_PATH} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${SIGN_LINK_PROTOCOL}\r\nx-internal-token: ${TOKEN}\r\n\r\n`,
    );
    await new Promise((r) => socket.once('data', r));
    socket.resume();
    const startedAt = Date.now();
    await stop(s);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    socket.destroy();
  });

  it('error: an answer head that is not {status, headers} fails the link (LINK_MALFORMED), never reaches a client', async () => {
    const bad = createServer();
    let upgraded: Socket | undefined;
    bad.on('upgrade', (_req: unknown, socket: Socket) => {
      upgraded = socket;
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SIGN_LINK_PROTOCOL}\r\n\r\n`);
      const reader = new FrameReader(4096);
      socket.on('data', (chunk: Buffer) => {
        for (const frame of reader.push(chunk)) socket.write(encodeFrame(frame.id, '{"status":99}', Buffer.from('x')));
      });
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    const c = client(`http://127.0.0.1:${(bad.address() as AddressInfo).port}`);
    await expect(ask(c, 'x').answer).rejects.toMatchObject({ code: 'LINK_MALFORMED' });
    c.close();
    upgraded?.destroy();
    await new Promise((r) => bad.close(r));
  });
});
