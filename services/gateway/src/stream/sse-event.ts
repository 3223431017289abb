/**
 * Server-Sent Events framing (WHATWG HTML, "server-sent events"): an event is `event:`,
 * optional `id:`, one `data:` line per line of the payload, and a blank line. A line that
 * starts with `:` is a comment, which clients ignore (used as a keep-alive).
 */

/** The bytes of one event. A payload with line breaks becomes several `data:` lines (clients join them with `\n`). */
export function sseEvent(event: string, data: string | Buffer, id?: number): Buffer {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  const lines = /[\r\n]/.test(text) ? text.split(/\r\n|\r|\n/) : [text];
  const head = id === undefined ? `event: ${event}\n` : `event: ${event}\nid: ${id}\n`;
  return Buffer.from(`${head}${lines.map((l) => `data: ${l}\n`).join('')}\n`, 'utf8');
}

/** A comment line (keeps proxies from closing an idle stream). */
export const SSE_KEEPALIVE = Buffer.from(': keep-alive\n\n', 'utf8');

/**
 * The `Last-Event-ID` request header as a block number: undefined when absent or empty,
 * null when malformed (not ASCII digits, or beyond 2^53).
 */
export function parseLastEventId(raw: string | string[] | undefined): number | undefined | null {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[0-9]{1,16}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}
