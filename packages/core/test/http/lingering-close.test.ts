/**
 * An answer given before the request's body is read, on a connection that then closes (the
 * client asked `Connection: close`, or spoke HTTP/1.0): the client is still writing its body
 * when the answer comes. Closed at once, the server's socket has unread bytes, the kernel
 * resets the connection, the client's next write fails (EPIPE) and the answer is lost with
 * the reset. listen() closes lingering (serve.ts): the answer and a FIN, then the rest of the
 * body read and thrown away, up to a bound and a time limit.
 *
 * Every client writes an 800 KiB body in 16 KiB pieces, yielding between pieces, so that it is
 * still writing when the answer (413 from the body reader, 401 from a step that reads nothing)
 * is sent; every connection must see exactly its one answer.
 */
import net from 'node:net';
import { ApiError } from '@pmm/protocol';
import { parseRawResponses } from '@pmm/testkit';
import { listen, readLimitedBody, routeTable, sendError, type Served } from '../../src';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../src/http/lingering-close';

const CONNECTIONS = 40;
const BODY = Buffer.alloc(800 * 1024, 0x61);
const PIECE = 16 * 1024;

let served: Served;
/** Requests /counted was handled for. */
let counted = 0;

beforeAll(async () => {
  const table = routeTable({
    frame: (_req, _res, next) => next(),
    routes: [
      {
        path: '/limited',
        methods: ['POST'],
        steps: [(req, res) => readLimitedBody(req, res, 16 * 1024, () => res.end('read'))],
      },
      {
        path: '/counted',
        methods: ['POST'],
        steps: [(_req, res) => void ((counted += 1), res.end('counted'))],
      },
      {
        path: '/refused',
        methods: ['POST'],
        steps: [(_req, res) => sendError(res, new ApiError('UNAUTHORIZED', 'no key'))],
      },
    ],
  });
  served = await listen(table, 0, '127.0.0.1');
});

afterAll(async () => {
  served.server.closeAllConnections();
  await served.close();
});

interface Outcome {
  statuses: number[];
  /** The client's socket error, if any (EPIPE, ECONNRESET). */
  error?: string;
  /** Bytes the socket took (written to the kernel) before the connection ended. */
  written: number;
  /** From the connect to the close, ms. */
  elapsedMs: number;
}

interface Step {
  data: string | Buffer;
  /** Pause after writing. */
  waitMs?: number;
}

/**
 * Plays `steps` on one connection, each write waiting for the socket to take the last one, for
 * as long as the socket takes them; half-open allowed, so the client goes on sending after the
 * server's FIN, as an uploading client does. Resolves when the connection is closed.
 */
function exchange(steps: Step[], end = true): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ port: served.port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    let error: string | undefined;
    let written = 0;
    const started = Date.now();
    socket.on('data', (c: Buffer) => received.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code));
    socket.on('close', () => {
      let statuses: number[];
      try {
        statuses = parseRawResponses(Buffer.concat(received)).responses.map((r) => r.status);
      } catch {
        statuses = [-1];
      }
      resolve({ statuses, error, written, elapsedMs: Date.now() - started });
    });
    socket.once('connect', async () => {
      for (const step of steps) {
        if (!socket.writable) break;
        const data = typeof step.data === 'string' ? Buffer.from(step.data, 'latin1') : step.data;
        await new Promise<void>((taken) => (socket.write(data) ? setImmediate(taken) : socket.once('drain', taken)));
        written += data.length;
        if (step.waitMs) await new Promise((r) => setTimeout(r, step.waitMs));
      }
      if (end && socket.writable) socket.end();
    });
  });
}

/** One POST whose body is written in 16 KiB pieces, the client yielding between pieces. */
function upload(path: string, head: string, body = BODY): Promise<Outcome> {
  const pieces: Step[] = [];
  for (let at = 0; at < body.length; at += PIECE) pieces.push({ data: body.subarray(at, at + PIECE) });
  return exchange([
    { data: `POST ${path} ${head}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n` },
    ...pieces,
  ]);
}

describe.each([
  ['Connection: close', 'HTTP/1.1\r\nHost: x\r\nConnection: close'],
  ['HTTP/1.0', 'HTTP/1.0'],
])('an early answer on a connection that closes (%s)', (_name, head) => {
  it.each([
    ['/limited', 413],
    ['/refused', 401],
  ])(
    'behavior: POST %s with the client still writing: every one of the answers arrives, no write fails',
    async (path, status) => {
      const outcomes = await Promise.all(Array.from({ length: CONNECTIONS }, () => upload(path, head)));
      const lost = outcomes.filter((o) => o.statuses.length !== 1 || o.statuses[0] !== status);
      expect({ lost: lost.length, sample: lost.slice(0, 3) }).toEqual({ lost: 0, sample: [] });
      expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
      // The whole body was taken: the server read it (and threw it away) before closing.
      expect(outcomes.every((o) => o.written >= BODY.length)).toBe(true);
    },
  );
});

describe('the lingering is bounded', () => {
  const head = 'HTTP/1.1\r\nHost: x\r\nConnection: close';

  it('edge: a body far above the bound is not read whole: the connection is closed once the bound is passed', async () => {
    const huge = Buffer.alloc(16 * LINGER_MAX_BYTES, 0x61);
    const outcome = await upload('/refused', head, huge);
    expect(outcome.statuses).toEqual([401]);
    expect(outcome.written).toBeLessThan(huge.length);
  });

  it('edge: a client that sends its body a byte at a time is closed after the time limit, not at the request timeout', async () => {
    const drip: Step[] = Array.from({ length: 60 }, () => ({ data: 'a', waitMs: 250 }));
    const outcome = await exchange([
      { data: `POST /refused ${head}\r\nContent-Length: ${BODY.length}\r\n\r\n`, waitMs: 250 },
      ...drip,
    ]);
    expect(outcome.statuses).toEqual([401]);
    // Closed while the client still had bytes to send; Node's request timeout (15 s) is later.
    expect(outcome.written).toBeLessThan(BODY.length);
    expect(outcome.elapsedMs).toBeLessThan(LINGER_MAX_MS + 6_000);
  });

  it('security: a request sent behind the body of one answered with a close is never handled', async () => {
    counted = 0;
    const small = 'a'.repeat(64);
    const outcome = await exchange([
      { data: `POST /refused ${head}\r\nContent-Length: ${2 * small.length}\r\n\r\n${small}`, waitMs: 100 },
      { data: `${small}POST /counted HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`, waitMs: 100 },
    ]);
    expect(outcome.statuses).toEqual([401]);
    expect(counted).toBe(0);
  });
});
