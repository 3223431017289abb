/**
 * listen()'s close() under keep-alive load: a client that sends its next request as soon as the
 * last is answered never leaves its connection idle, and close() waits for every connection to
 * end. Each request that starts during the drain gets `Connection: close`, so close() ends. The
 * same for an answer in flight when the drain begins, and for pipelined requests (raw socket).
 */
import { Agent, request, type ServerResponse } from 'node:http';
import { parseRawResponses, rawExchange, settlesWithin, until } from '@pmm/testkit';
import { listen, type Served } from '../../src';

const CLIENTS = 4;
let served: Served | undefined;
const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });

afterAll(async () => {
  agent.destroy();
  served?.server.closeAllConnections();
  await served?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One GET (on the shared keep-alive agent, or a new connection): its status and Connection header, or the error. */
function get(
  port: number,
  via: Agent | false = agent,
): Promise<{ status?: number; connection?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: via }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

it("behavior: close() ends while keep-alive clients keep sending (each request of the drain is its connection's last)", async () => {
  const answers: { status?: number; connection?: string; error?: string }[] = [];
  const closeAfter = Date.now() + 300;
  const held: ServerResponse[] = [];
  let closed: Promise<boolean> | undefined;
  let before = 0;
  served = await listen(
    (_req, res) => {
      if (closed || Date.now() < closeAfter) return void setTimeout(() => res.end('ok'), 2);
      // Answers wait until every client has a request in flight; then close() with no
      // connection idle (an idle one it closes at once), and the answers go out.
      held.push(res);
      if (held.length < CLIENTS) return;
      before = answers.length;
      closed = settlesWithin(served!.close(), 5_000);
      for (const r of held.splice(0)) r.end('ok');
    },
    0,
    '127.0.0.1',
  );
  const port = served.port;
  let stopping = false;
  const client = async () => {
    while (!stopping) {
      const answer = await get(port);
      answers.push(answer);
      if (answer.error) return;
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  await (async () => {
    while (!closed) await sleep(20);
  })();
  expect(await closed).toBe(true);
  stopping = true;
  await Promise.all(clients);
  // The load was kept alive until the drain; once closed, connecting is refused.
  expect(before).toBeGreaterThan(0);
  expect(answers.slice(0, before).every((a) => a.status === 200 && a.connection === 'keep-alive')).toBe(true);
  // A new connection: the agent may still pool a socket the server has closed ("socket hang up").
  expect((await get(port, false)).error).toMatch(/ECONNREFUSED/);
});

describe('connections busy when the drain begins (keep-alive timeout 5 s: close() must not wait for it)', () => {
  const raw = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
  let slow: Served | undefined;
  afterEach(async () => {
    slow?.server.closeAllConnections();
    await slow?.close();
  });

  /**
   * A server whose `/slow` answers after 200 ms; a raw client sends `requests` at once, and a
   * second connection, `late`. The drain begins once the server holds both connections and has
   * read `/slow`; `late` is sent once the drain has begun. These are points, not sleeps: on a
   * loaded machine a 50 ms sleep ran late, and the drain closed the listening socket before it
   * had accepted the second connection, which then saw nothing.
   */
  async function drainWith(requests: string[], late: string[] = []) {
    const seen: string[] = [];
    let accepted = 0;
    let drainBegun = () => {};
    const drainHasBegun = new Promise<void>((r) => (drainBegun = r));
    slow = await listen(
      (req, res) => {
        seen.push(req.url!);
        if (req.url === '/slow') return void setTimeout(() => res.end('slow'), 200);
        res.end(`ok ${req.url}`);
      },
      0,
      '127.0.0.1',
    );
    slow.server.on('connection', () => accepted++);
    const exchange = rawExchange(slow.port, requests.join(''), { timeoutMs: 8_000 });
    const lateExchange = late.length
      ? rawExchange(slow.port, [{ after: drainHasBegun }, { data: late.join('') }], { timeoutMs: 8_000 })
      : undefined;
    await until(
      () => accepted === (late.length ? 2 : 1) && seen.includes('/slow'),
      5_000,
      'both connections accepted, /slow read',
      5,
    );
    const closing = settlesWithin(slow.close(), 2_000);
    drainBegun();
    const closed = await closing;
    const first = await exchange;
    const second = await lateExchange;
    return {
      closed,
      socketClosed: first.closed,
      seen,
      responses: parseRawResponses(first.received).responses,
      late: second && { closed: second.closed, responses: parseRawResponses(second.received).responses },
    };
  }

  it('behavior: a connection whose answer was in flight when the drain began is closed once it idles', async () => {
    const r = await drainWith([raw('/slow')]);
    expect(r.closed).toBe(true);
    expect(r.socketClosed).toBe(true);
    expect(r.responses.map((x) => [x.status, x.body.toString()])).toEqual([[200, 'slow']]);
  });

  it('security: pipelined requests sent before the drain are each answered, in order, then the connection ends', async () => {
    const r = await drainWith([raw('/slow'), raw('/a'), raw('/b')]);
    expect(r.closed).toBe(true);
    expect(r.socketClosed).toBe(true);
    // Every request the server took was answered: none is handled and then dropped.
    expect(r.seen).toEqual(['/slow', '/a', '/b']);
    expect(r.responses.map((x) => [x.status, x.body.toString()])).toEqual([
      [200, 'slow'],
      [200, 'ok /a'],
      [200, 'ok /b'],
    ]);
  });

  it('security: of requests pipelined during the drain the first is answered (Connection: close); the others are not handled, so resending them is safe', async () => {
    // The first connection holds the drain open; the second sends its pipeline once it has begun.
    const r = await drainWith([raw('/slow')], [raw('/x'), raw('/y'), raw('/z')]);
    expect(r.closed).toBe(true);
    expect(r.late?.closed).toBe(true);
    expect(r.seen).toEqual(['/slow', '/x']);
    expect(r.late?.responses.map((x) => [x.body.toString(), x.headers.connection])).toEqual([['ok /x', 'close']]);
  });
});
