/**
 * `POST /v2/swap/sign` and `POST /v1/swap/sign`: the gateway's one sign route. Its steps, in
 * the order of docs/decisions/0001-error-precedence.md, after the route table's own (frame, 404,
 * 405, CORS): API key 401 · rate limit 429 · body 413 · body encoding 400 · the signer, one
 * request built by sign-forward.ts. What the signer answers is the client's answer. The sign's
 * deadline (sign-admission.ts) starts before the key and is checked before each step after it:
 * 503 SERVICE_UNAVAILABLE whenever it can no longer be met, and past the bound on requests at
 * the signer (docs/decisions/0071-past-capacity-a-fast-no.md).
 *
 * The signer is sent the route's declared path, never the request target the client wrote: Node
 * hands that through as written (`http://evil.example/v2/swap/sign`, `/v2/swap/sign#x/../y`),
 * and the router matches only its path part.
 */
import { bodyEncoding } from '@pmm/protocol';
import { localsOf, readLimitedBody, type Step } from '@pmm/core';
import type { signForwarder } from './sign-forward';

export interface SignStepOptions {
  /** The route's declared path (public-routes.ts), the path the signer is sent. */
  path: string;
  bodyLimit: number;
  /** Sends the request to the signer (sign-forward.ts). */
  forward: ReturnType<typeof signForwarder>;
}

/** The last step of the sign route (after the key and the limit): read the body, forward it. */
export function signStep(opts: SignStepOptions): Step {
  return (req, res, next) =>
    readLimitedBody(req, res, opts.bodyLimit, (body) => {
      let encoding: string | undefined;
      try {
        encoding = bodyEncoding(req.headers['content-encoding']);
      } catch (err) {
        return next(err);
      }
      opts.forward(res, localsOf(res), { path: opts.path, body, encoding });
    });
}
