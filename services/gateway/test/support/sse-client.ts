/**
 * A minimal Server-Sent Events client for tests, on node:http (independent of the gateway's
 * framing code): connects, parses events and comments as the WHATWG algorithm does, and lets
 * a test wait for them, pause reading (a slow client) and disconnect.
 */
import { request, type IncomingMessage } from 'node:http';
import { until } from '@pmm/testkit';

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** Parsed events, in order. */
  events: SseEvent[];
  /** Comment lines received (without the leading colon). */
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** The raw body when the answer was not a stream (an error envelope). */
  body(): Promise<string>;
  /** Resolves once `n` events were received (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves once `pred` holds for the stream (polled). */
  until(pred: (s: SseStream) => boolean, timeoutMs?: number): Promise<void>;
  pause(): void;
  resume(): void;
  close(): void;
}

export function openStream(base: string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method: 'GET', headers: { Accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      let buffer = '';
      let raw = '';
      let current: { event?: string; id?: string; data?: string[] } = {};
      const streaming = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
      });
      res.setEncoding('utf8');
      res.on('error', () => undefined);
      res.on('data', (chunk: string) => {
        if (!streaming) {
          raw += chunk;
          return;
        }
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) !== -1) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data) {
              events.push({ event: current.event ?? 'message', id: current.id, data: current.data.join('\n') });
            }
            current = {};
          } else if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
          } else {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') current.event = value;
            else if (field === 'id') current.id = value;
            else if (field === 'data') (current.data ??= []).push(value);
          }
        }
      });
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        ended,
        body: async () => {
          await ended;
          return raw;
        },
        waitFor: async (n, timeoutMs = 5_000) => {
          await stream.until((s) => s.events.length >= n, timeoutMs);
          return events.slice(0, n);
        },
        until: async (pred, timeoutMs = 5_000) => {
          // On failure, what arrived: the last events' types and ids (a book's data can be megabytes).
          const seen = () =>
            `${events.length} events, last: ${JSON.stringify(events.slice(-8).map((e) => [e.event, e.id, e.data.length]))}; ` +
            `${comments.length} comments; ended: ${res.complete || res.destroyed}`;
          await until(() => pred(stream), timeoutMs, 'sse condition').catch((err: Error) => {
            throw new Error(`${err.message} (${seen()})`);
          });
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => {
          req.destroy();
          res.destroy();
        },
      };
      resolve(stream);
    });
    req.end();
  });
}
