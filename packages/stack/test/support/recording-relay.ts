/**
 * A TCP relay between the gateway and the signer that keeps every byte the gateway sends, per
 * connection, so that a test can read exactly what reached the signer; and that can stall (hold
 * what arrives, answer nothing), as a signer or its Redis that stops answering.
 */
import net from 'node:net';

export interface RecordingRelay {
  url: string;
  /** Per connection, everything the gateway wrote to it. */
  streams(): Buffer[];
  /** While stalled, new bytes are kept but not passed on, and nothing is answered. */
  stall(on: boolean): void;
  close(): Promise<void>;
}

export async function recordingRelay(targetPort: () => number): Promise<RecordingRelay> {
  const connections: { chunks: Buffer[]; client: net.Socket; upstream?: net.Socket }[] = [];
  let stalled = false;
  const server = net.createServer((client) => {
    const conn: (typeof connections)[number] = { chunks: [], client };
    connections.push(conn);
    const held: Buffer[] = [];
    client.on('error', () => undefined);
    client.on('data', (data: Buffer) => {
      conn.chunks.push(data);
      if (stalled) held.push(data);
      else conn.upstream?.write(data);
    });
    if (stalled) return; // a stalled signer accepts and never answers
    const upstream = net.connect(targetPort(), '127.0.0.1');
    conn.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('data', (d: Buffer) => client.write(d));
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams: () => connections.map((c) => Buffer.concat(c.chunks)),
    stall(on) {
      stalled = on;
      // A stall ends the connections it held: the signer "came back" with fresh ones.
      if (!on) for (const c of connections) if (!c.upstream) c.client.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) {
          c.client.destroy();
          c.upstream?.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

export interface RelayedRequest {
  requestLine: string;
  /** Header names as sent (lower-cased), in order. */
  names: string[];
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Splits one connection's bytes into HTTP/1.1 requests framed by Content-Length (what the
 * gateway sends), or bodiless GETs (its readiness check). Throws on anything else: any other
 * request without Content-Length, a chunked one, or bytes left over that do not make a
 * complete request.
 */
export function parseRelayedRequests(stream: Buffer): RelayedRequest[] {
  const requests: RelayedRequest[] = [];
  let rest = stream;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1)
      throw new Error(`incomplete request head: ${JSON.stringify(rest.toString('latin1').slice(0, 200))}`);
    const [requestLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const names: string[] = [];
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line)}`);
      const name = line.slice(0, colon).toLowerCase();
      if (name in headers) throw new Error(`header sent twice: ${name}`);
      names.push(name);
      headers[name] = line.slice(colon + 1).trim();
    }
    if (headers['transfer-encoding'] !== undefined) throw new Error('a chunked request reached the signer');
    const bodiless = requestLine!.startsWith('GET ') && headers['content-length'] === undefined;
    const length = bodiless ? 0 : Number(headers['content-length']);
    if (!Number.isInteger(length)) throw new Error(`no valid Content-Length: ${requestLine}`);
    const bodyEnd = end + 4 + length;
    if (rest.length < bodyEnd) throw new Error(`body shorter than its Content-Length: ${requestLine}`);
    requests.push({ requestLine: requestLine!, names, headers, body: rest.subarray(end + 4, bodyEnd) });
    rest = rest.subarray(bodyEnd);
  }
  return requests;
}
