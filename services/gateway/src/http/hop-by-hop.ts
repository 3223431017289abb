/**
 * The hop-by-hop headers of a message (RFC 9110 §7.6.1): meaningful for one connection only,
 * so a proxy never forwards them. The fixed list, `Proxy-*`, and every header `Connection` names.
 */
import type { IncomingHttpHeaders } from 'node:http';

const ALWAYS = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** A test of header names (lower case) against the hop-by-hop headers of a message with `headers`. */
export function hopByHop(headers: IncomingHttpHeaders): (name: string) => boolean {
  const connection = headers.connection;
  const named =
    typeof connection === 'string'
      ? connection
          .toLowerCase()
          .split(',')
          .map((t) => t.trim())
      : [];
  return (name) => ALWAYS.has(name) || name.startsWith('proxy-') || named.includes(name);
}

/** Deletes the hop-by-hop headers from `headers` (a request's, before it is proxied). */
export function dropHopByHop(headers: IncomingHttpHeaders): void {
  const isHop = hopByHop(headers);
  for (const name of Object.keys(headers)) if (isHop(name)) delete headers[name];
}
