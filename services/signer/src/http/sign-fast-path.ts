/**
 * The hot path: `POST /v2/swap/sign` and `POST /v1/swap/sign` answered straight from
 * node:http, in front of Express. Measured (services/gateway/bench/gateway.bench.ts, with
 * `BENCH_CPU_PROF`), Express's router, body-parser and per-request middleware cost several
 * times what checking and signing a quote costs, and this is the one request that carries
 * money. Express stays for everything else (health, metrics, 404, 405, compressed bodies),
 * and the Express sign routes stay as the reference this path is tested against
 * (test/sign-fast-path.test.ts sends every case to both and compares the answers).
 *
 * It runs the SAME steps as the Express routes (sign-routes.ts `SignSteps`) in the same order
 * (internal token 401 · integrator 401/503 · body 413/400 · parse 400/422 · sign), with the
 * same request id, headers, error envelope, metrics and logs. Only the routing differs: for
 * these two exact paths and this method nothing is left to route. Requests it does not take:
 * other methods or paths (404/405 are Express's), a query string, or a `Content-Encoding`
 * (body-parser inflates those).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@pmm/protocol';
import {
  LazyRequestContext,
  requestIdOf,
  sendErrorEnvelope,
  type HttpRequestMetrics,
  type Logger,
  type MaybePromise,
} from '@pmm/core';
import { V1_SIGN_PATH, V2_SIGN_PATH, setDeprecationHeaders, type SignSteps } from './sign-routes';
import { answerSignExchange, runSignExchange, tooLarge } from './sign-exchange';

export interface SignFastPathOptions {
  steps: SignSteps;
  logger: Logger;
  http: HttpRequestMetrics;
  /** /v1 is served (chain 8453 is). */
  v1: boolean;
}
/**
 * The body's bytes, at most `limit`, with body-parser's answers: 413 when `Content-Length`
 * or the bytes received exceed the limit (the rest of the upload is then discarded), 400
 * when fewer bytes than announced arrive or the upload is aborted.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  if (length !== undefined && length > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (length !== undefined && size !== length) {
        reject(new ApiError('INVALID_JSON', 'body: its length does not match Content-Length'));
        return;
      }
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onAborted = () => {
      cleanup();
      reject(new ApiError('INVALID_JSON', 'body: the upload was aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
  });
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createSignFastPath(opts: SignFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { steps, logger, http } = opts;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url;
    const legacy = opts.v1 && url === V1_SIGN_PATH;
    if (url !== V2_SIGN_PATH && !legacy) return false;
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;

    const requestId = requestIdOf(req);
    const locals = new LazyRequestContext(requestId, process.hrtime.bigint(), logger);
    (res as { locals?: unknown }).locals = locals;
    res.setHeader('X-Request-Id', requestId);
    if (legacy) setDeprecationHeaders(res);
    res.once('finish', () =>
      http.observe('POST', url, res.statusCode, Number(process.hrtime.bigint() - locals.startedAt) / 1e9),
    );
    let result: MaybePromise<string>;
    try {
      steps.checkToken(req.headers);
      result = runSignExchange(steps, {
        headers: req.headers,
        legacy,
        locals,
        body: (limit) => readBody(req, limit),
      });
    } catch (err) {
      req.resume();
      sendErrorEnvelope(res, err);
      return true;
    }
    void answerSignExchange(res, result);
    return true;
  };
}
