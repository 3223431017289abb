/**
 * `POST /v2/swap/sign` and legacy `POST /v1/swap/sign`: the signer's one sign route, the HTTP
 * adapter of the sign use case (domain/sign-use-case.ts), as route-table steps (app.ts).
 *
 * Steps, in the order of docs/decisions/0001-error-precedence.md: internal token (401) ·
 * admission (503: past the bound on signs in flight, or arrived with less left of its deadline
 * than a sign takes here: domain/sign-admission.ts) · integrator (401/503) · body (413, 400) ·
 * the use case (400, 422, 403, 503, 500), to the sign's deadline (the gateway's budget, cut to
 * MAX_SIGN_DEADLINE_MS: domain/sign-admission.ts).
 */
import {
  API_KEY_ID_HEADER,
  isRequestId,
  isSafeToken,
  SERVICE_REQUEST_ID_HEADER,
  SIGN_BUDGET_HEADER,
} from '@pmm/protocol';
import {
  attempt,
  Deadline,
  deadlineRefusal,
  localsOf,
  overloadRefusal,
  processLoopLag,
  readLimitedBody,
  RefusalError,
  sendJson,
  type Step,
} from '@pmm/core';
import type { SignerAdmission } from '../domain/sign-admission';
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
  admission: SignerAdmission;
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

/** The sign route's steps after the internal token: admission, the integrator, the body, the use case. */
export function signStep(opts: SignStepOptions): Step {
  const { sign, legacy, admission } = opts;
  const lag = processLoopLag();
  return (req, res, next) => {
    const locals = localsOf(res);
    const log = () => locals.log;
    const arrived = Date.now();
    // Counted and logged quietly (a burst of them must not flood the log).
    const fail = (err: unknown) => {
      if (err instanceof RefusalError) {
        admission.refused(err);
        locals.quiet = true;
      }
      next(err);
    };
    if (!admission.signs.tryAcquire()) {
      req.resume();
      return fail(overloadRefusal('in_flight'));
    }
    // The slot is held until the use case ends (its answer sent or not), or the request ends before it.
    const release = admission.signs.releaser();
    let working = false;
    res.once('close', () => {
      if (!working) release();
    });
    const budget = admission.budgetOf(req.headers[SIGN_BUDGET_HEADER]);
    // Less the loop's delay: about how long the request waited here before it was read.
    const deadline = new Deadline(arrived - lag.ms + budget, budget);
    if (!deadline.allows(admission.signTime, arrived)) {
      req.resume();
      return fail(deadlineRefusal('queue'));
    }
    const done = () => {
      release();
      admission.signTime.observe(Date.now() - arrived);
    };
    const run = (integrator: IntegratorView) => {
      locals.bind({ integratorId: integrator.record.id });
      readLimitedBody(req, res, opts.bodyLimitBytes, (bytes) => {
        const keyId = req.headers[API_KEY_ID_HEADER];
        working = true;
        attempt(
          () =>
            sign({
              body: parseJsonBody(decodeBody(bytes, req.headers['content-encoding'], opts.bodyLimitBytes)),
              integrator,
              legacy,
              keyId: isSafeToken(keyId, 64) ? keyId : '',
              ...requestIds(req.headers[SERVICE_REQUEST_ID_HEADER], locals.requestId),
              deadline,
              log,
            }),
          (err) => {
            done();
            fail(err);
          },
          (json) => {
            done();
            sendJson(res, 200, json, ANSWER_HEADERS);
          },
        );
      });
    };
    attempt(
      () => resolveIntegrator(opts.integrators, req.headers, log),
      (err) => {
        req.resume();
        fail(err);
      },
      run,
    );
  };
}
