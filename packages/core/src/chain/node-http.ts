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
 * - **node:http, not Node's fetch**, for the JSON-RPC clients' round trips (postToNode).
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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

/** What a node answered: its HTTP status and its body as text (read up to the caller's bound). */
export interface NodeAnswer {
  status: number;
  text: string;
}

export interface PostToNodeOptions {
  /** Aborts the request (its socket is destroyed); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The most bytes of an answer read (NodeAnswerTooLarge past them). */
  maxBytes: number;
  /**
   * Whether the body of an answer that is not 2xx is read (default false: it is dropped unread,
   * the status alone is the answer). A JSON-RPC client that reports the node's own error for an
   * HTTP error reads it.
   */
  readErrors?: boolean;
}

/**
 * Keep-alive connections to nodes, per process: an idle one is closed after 4 s (the default of
 * Node's fetch, under the 5 s most servers keep one open), and no bound on how many are open at
 * once (the callers bound their requests).
 */
const AGENT_OPTIONS = { keepAlive: true, timeout: 4_000, scheduling: 'lifo' as const };
const agents = { 'http:': new HttpAgent(AGENT_OPTIONS), 'https:': new HttpsAgent(AGENT_OPTIONS) };

/**
 * POSTs a JSON-RPC body to a node over node:http (or https) on a keep-alive connection, and reads
 * its answer: rejects with NodeRedirectError on a redirect (its body unread), NodeAnswerTooLarge
 * past `maxBytes` (the connection dropped), the signal's reason when aborted, or the socket's
 * error; any other status is the caller's to judge. Not Node's fetch: a round trip through it
 * cost a few hundred µs more CPU than through node:http (its WHATWG streams, abort signals and
 * headers objects), most of a firm quote's cost to the signer at a paced 500/s
 * (docs/decisions/0071-past-capacity-a-fast-no.md).
 */
export function postToNode(url: string, body: string, opts: PostToNodeOptions): Promise<NodeAnswer> {
  return new Promise<NodeAnswer>((resolve, reject) => {
    const target = new URL(url);
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        agent,
        signal: opts.signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const fail = (err: Error) => {
          res.destroy();
          reject(err);
        };
        if (isRedirect(status)) return fail(new NodeRedirectError(status));
        const ok = status >= 200 && status < 300;
        if (!ok && !opts.readErrors) {
          res.resume();
          return resolve({ status, text: '' });
        }
        if (Number(res.headers['content-length'] ?? 0) > opts.maxBytes)
          return fail(new NodeAnswerTooLarge(opts.maxBytes));
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) fail(new NodeAnswerTooLarge(opts.maxBytes));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, text: Buffer.concat(chunks, size).toString('utf8') }));
        // Cut mid-answer (the connection closed, or the signal aborted it): a promise settles once.
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the node closed the connection mid-answer'));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
