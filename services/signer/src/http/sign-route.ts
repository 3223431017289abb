/**
 * `POST /v2/swap/sign` and legacy `POST /v1/swap/sign`: the signer's one sign route, the HTTP
 * adapter of the sign use case (domain/sign-use-case.ts), as route-table steps (app.ts).
 *
 * Steps, in the order of docs/decisions/0001-error-precedence.md: internal token (401) ·
 * integrator (401/503) · body (413, 400) · the use case (400, 422, 403, 503, 500).
 */
import { API_KEY_ID_HEADER, isRequestId, isSafeToken, SERVICE_REQUEST_ID_HEADER } from '@pmm/protocol';
import { attempt, localsOf, readLimitedBody, sendJson, type Step } from '@pmm/core';
import type { SignUseCase } from '../domain/sign-use-case';
import type { IntegratorSource, IntegratorView } from '../store/integrator-store';
import { decodeBody } from './decode-body';
import { resolveIntegrator } from './integrator-context';
import { parseJsonBody } from './json-body';

export const V2_SIGN_PATH = '/v2/swap/sign';
export const V1_SIGN_PATH = '/v1/swap/sign';

export interface SignStepOptions {
  sign: SignUseCase;
  integrators: IntegratorSource;
  bodyLimitBytes: number;
  legacy: boolean;
}

/**
 * The ids the audit record keeps: the gateway's own (`X-Service-Request-Id`; this request's id
 * when absent, as on a direct call) and, when the id the client sees differs, the client's.
 */
function requestIds(service: unknown, seen: string): { requestId: string; clientRequestId?: string } {
  const requestId = isRequestId(service) ? service : seen;
  return requestId === seen ? { requestId } : { requestId, clientRequestId: seen };
}

const ANSWER_HEADERS = { 'Cache-Control': 'no-store' };

/** The sign route's steps after the internal token: the integrator, the body, the use case. */
export function signStep(opts: SignStepOptions): Step {
  const { sign, legacy } = opts;
  return (req, res, next) => {
    const locals = localsOf(res);
    const log = () => locals.log;
    const run = (integrator: IntegratorView) => {
      locals.bind({ integratorId: integrator.record.id });
      readLimitedBody(req, res, opts.bodyLimitBytes, (bytes) => {
        const keyId = req.headers[API_KEY_ID_HEADER];
        attempt(
          () =>
            sign({
              body: parseJsonBody(decodeBody(bytes, req.headers['content-encoding'], opts.bodyLimitBytes)),
              integrator,
              legacy,
              keyId: isSafeToken(keyId, 64) ? keyId : '',
              ...requestIds(req.headers[SERVICE_REQUEST_ID_HEADER], locals.requestId),
              log,
            }),
          next,
          (json) => sendJson(res, 200, json, ANSWER_HEADERS),
        );
      });
    };
    attempt(
      () => resolveIntegrator(opts.integrators, req.headers, log),
      (err) => {
        req.resume();
        next(err);
      },
      run,
    );
  };
}
