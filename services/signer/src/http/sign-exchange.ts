/**
 * One sign request after its transport has delivered it: the steps both node:http paths
 * (sign-fast-path.ts) and the sign link (sign-link-handler.ts) run, in the order of
 * docs/decisions.md#error-precedence: integrator 401/503 · body 413/400 · parse 400/422 ·
 * sign. The internal token (401) is checked before, by each transport: per request over
 * HTTP, once per connection on the link. The Express routes (sign-routes.ts) run the same
 * steps as middleware and are the reference both are tested against.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, INTEGRATOR_ID_HEADER } from '@pmm/protocol';
import { andThen, sendErrorEnvelope, type EnvelopeTarget, type LazyRequestContext, type MaybePromise } from '@pmm/core';
import { parseJsonBody } from './json-body';
import { sendSigned, type SignSteps } from './sign-routes';

export const tooLarge = () => new ApiError('PAYLOAD_TOO_LARGE', 'body: larger than the size limit');

export interface SignExchange {
  headers: IncomingHttpHeaders;
  legacy: boolean;
  locals: LazyRequestContext;
  /** The body's bytes once the integrator is known; rejects or throws 413/400 as body-parser would. */
  body(limit: number): Promise<Buffer> | Buffer;
}

/** The JSON text of the 200, or a thrown/rejected ApiError. */
export function runSignExchange(steps: SignSteps, x: SignExchange): MaybePromise<string> {
  const { locals } = x;
  return andThen(
    steps.integrator(x.headers, () => locals.log),
    (integrator) => {
      locals.bind({ integratorId: x.headers[INTEGRATOR_ID_HEADER] as string });
      return andThen(x.body(steps.bodyLimit), (body) =>
        steps.sign(parseJsonBody(body), integrator, x.legacy, {
          headers: x.headers,
          requestId: locals.requestId,
          log: () => locals.log,
        }),
      );
    },
  );
}

/** Writes the outcome: the signed quote, or the error envelope (never twice). */
export function answerSignExchange(
  res: EnvelopeTarget & { headersSent?: boolean },
  result: MaybePromise<string>,
): void | Promise<void> {
  if (!(result instanceof Promise)) return sendSigned(res, result);
  return result.then(
    (json) => sendSigned(res, json),
    (err: unknown) => {
      if (res.headersSent) return;
      sendErrorEnvelope(res, err);
    },
  );
}
