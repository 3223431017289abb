/**
 * HTTP to an EVM node: what every node client of the services and commands shares (the
 * indexer's JSON-RPC transport, the operator commands' chain reader, the signer's validity check), so
 * that the rules below are written once (docs/decisions/0034-a-node-that-lags-lies-or-floods.md).
 *
 * - **A redirect is the node's failure, never followed** (NodeRedirectError). Followed, a node,
 *   or whoever answers at its URL (a hosted provider, a proxy, a DNS answer), could make the
 *   client POST its JSON-RPC body to any URL, internal services included, and take that answer
 *   as the node's. Node's fetch follows by default (`redirect: 'follow'`, the body re-sent on
 *   307 and 308), and so does ethers' FetchRequest (301, 302, 307 and 308, method and body kept).
 *   Every 3xx counts: none is a JSON-RPC answer.
 * - **An answer is read up to a bound** (NodeAnswerTooLarge): a declared length above it is
 *   refused unread, a stream is abandoned (the connection dropped) as soon as it passes it.
 */
import { FetchRequest } from 'ethers';

/** The node answered with a redirect (any 3xx); it was not followed. */
export class NodeRedirectError extends Error {
  constructor(readonly status: number) {
    super(`the node answered HTTP ${status}, a redirect: not followed`);
    this.name = 'NodeRedirectError';
  }
}

/** The node's answer is larger than the client accepts; it was not read whole. */
export class NodeAnswerTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the node's answer exceeds ${maxBytes} bytes`);
    this.name = 'NodeAnswerTooLarge';
  }
}

const isRedirect = (status: number) => status >= 300 && status < 400;

/**
 * POSTs a JSON-RPC body to a node with Node's fetch (keep-alive). Rejects with NodeRedirectError
 * on a redirect (its body unread); any other status is the caller's to judge.
 */
export async function postToNode(url: string, body: string, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal,
    redirect: 'manual',
  });
  if (isRedirect(res.status)) {
    await res.body?.cancel().catch(() => undefined);
    throw new NodeRedirectError(res.status);
  }
  return res;
}

/** The answer's body as text, at most `maxBytes` of it (else NodeAnswerTooLarge, the rest unread). */
export async function readNodeAnswer(res: Response, maxBytes: number): Promise<string> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new NodeAnswerTooLarge(maxBytes);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new NodeAnswerTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The connection of an ethers JsonRpcProvider to a node (pass it in place of the URL): ethers'
 * own HTTP client, but a redirect rejects with NodeRedirectError instead of being followed.
 */
export function nodeFetchRequest(url: string): FetchRequest {
  const request = new FetchRequest(url);
  const get = FetchRequest.createGetUrlFunc();
  request.getUrlFunc = async (req, signal) => {
    const res = await get(req, signal);
    if (isRedirect(res.statusCode)) throw new NodeRedirectError(res.statusCode);
    return res;
  };
  return request;
}
