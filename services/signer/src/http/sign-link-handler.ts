/**
 * The signer's answers on the sign link (core sign-link/): each frame is one sign request, run
 * through the same steps as the node:http paths (sign-exchange.ts) and answered with the same
 * status, headers and body they would write, plus the same request metric and logs.
 * The internal token was checked once, when the gateway opened the link.
 */
import { ApiError } from '@pmm/protocol';
import {
  LazyRequestContext,
  requestIdOf,
  sendErrorEnvelope,
  type HttpRequestMetrics,
  type LinkAnswer,
  type LinkRequest,
  type Logger,
} from '@pmm/core';
import { V1_SIGN_PATH, V2_SIGN_PATH, setDeprecationHeaders, type SignSteps } from './sign-routes';
import { answerSignExchange, runSignExchange, tooLarge } from './sign-exchange';

export interface SignLinkHandlerOptions {
  steps: SignSteps;
  logger: Logger;
  http: HttpRequestMetrics;
  /** /v1 is served (chain 8453 is). */
  v1: boolean;
}

/** Collects what the node:http paths would write to a ServerResponse. */
class LinkAnswerWriter {
  statusCode = 200;
  headersSent = false;
  readonly headers: Record<string, string> = {};
  body = '';
  constructor(readonly locals: LazyRequestContext) {}
  setHeader(name: string, value: string | number): void {
    this.headers[name] = String(value);
  }
  end(text: string): void {
    this.headersSent = true;
    this.body = text;
  }
  answer(): LinkAnswer {
    return { status: this.statusCode, headers: this.headers, body: Buffer.from(this.body) };
  }
}

export function signLinkHandler(
  opts: SignLinkHandlerOptions,
): (request: LinkRequest) => Promise<LinkAnswer> | LinkAnswer {
  const { steps, logger, http } = opts;
  return (request) => {
    const startedAt = process.hrtime.bigint();
    const { path, headers } = request;
    const locals = new LazyRequestContext(requestIdOf(request), startedAt, logger);
    const res = new LinkAnswerWriter(locals);
    res.setHeader('X-Request-Id', locals.requestId);
    const legacy = opts.v1 && path === V1_SIGN_PATH;
    const known = path === V2_SIGN_PATH || legacy;
    const finish = () => {
      // Route label as Express's: the pattern, or 'unmatched' (never a raw path).
      http.observe(
        'POST',
        known ? path : 'unmatched',
        res.statusCode,
        Number(process.hrtime.bigint() - startedAt) / 1e9,
      );
      return res.answer();
    };
    if (!known) {
      sendErrorEnvelope(res, new ApiError('NOT_FOUND', `no route for POST ${path}`));
      return finish();
    }
    if (legacy) setDeprecationHeaders(res);
    let written: void | Promise<void>;
    try {
      written = answerSignExchange(
        res,
        runSignExchange(steps, {
          headers,
          legacy,
          locals,
          body: (limit) => {
            if (request.body.length > limit) throw tooLarge();
            return request.body;
          },
        }),
      );
    } catch (err) {
      sendErrorEnvelope(res, err);
      return finish();
    }
    return written instanceof Promise ? written.then(finish) : finish();
  };
}
