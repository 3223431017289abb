/**
 * The hop-by-hop headers of a message (RFC 9110 §7.6.1): meaningful for one connection only,
 * so a proxy never forwards them. The fixed list, plus every header `Connection` names.
 */
import type { IncomingHttpHeaders } from 'node:http';

const ALWAYS = ['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-connection'];

/** Lower-case names of the hop-by-hop headers present in (or named by) `headers`. */
export function hopByHopHeaders(headers: IncomingHttpHeaders): Set<string> {
  const names = new Set(ALWAYS);
  for (const name of Object.keys(headers)) if (name.startsWith('proxy-')) names.add(name);
  const connection = headers.connection;
  if (typeof connection === 'string') {
    for (const token of connection.split(',')) {
      const name = token.trim().toLowerCase();
      if (name) names.add(name);
    }
  }
  return names;
}
