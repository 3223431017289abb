/**
 * `POST /v2/swap/sign` and legacy `POST /v1/swap/sign`: the signer's one sign entry, an HTTP
 * adapter of the sign use case (domain/sign-use-case.ts), served from node:http in front of
 * Express (app.ts): measured with `npm run bench gateway`, Express's router, request set-up
 * and body-parser cost the signer more CPU per quote than the signature. Express answers the
 * other methods on these paths (405), 404, health and metrics.
 *
 * Steps, in the order of docs/decisions.md#error-precedence: internal token (401) ·
 * integrator (401/503) · body (413, 400) · the use case (400, 422, 403, 503, 500).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  API_KEY_ID_HEADER,
  isRequestId,
  isSafeToken,
  SERVICE_REQUEST_ID_HEADER,
  v1DeprecationHeaders,
} from '@pmm/protocol';
import {
  beginRequest,
  readLimitedBody,
  sendError,
  type HttpRequestMetrics,
  type Logger,
  type MaybePromise,
} from '@pmm/core';
import type { SignUseCase } from '../domain/sign-use-case';
import type { IntegratorSource, IntegratorView } from '../store/integrator-store';
import { decodeBody } from './decode-body';
import { resolveIntegrator } from './integrator-context';
import { internalTokenCheck } from './internal-token';
import { parseJsonBody } from './json-body';

export const V2_SIGN_PATH = '/v2/swap/sign';
export const V1_SIGN_PATH = '/v1/swap/sign';

export interface SignRouteOptions {
  sign: SignUseCase;
  integrators: IntegratorSource;
  internalToken: string;
  bodyLimitBytes: number;
  /** /v1 is served only when chain 8453, its only chain, is. */
  v1: boolean;
  logger: Logger;
  http: HttpRequestMetrics;
}

/**
 * The ids the audit record keeps: the gateway's own (`X-Service-Request-Id`; this request's id
 * when absent, as on a direct call) and, when the id the client sees differs, the client's.
 */
function requestIds(service: unknown, seen: string): { requestId: string; clientRequestId?: string } {
  const requestId = isRequestId(service) ? service : seen;
  return requestId === seen ? { requestId } : { requestId, clientRequestId: seen };
}

function answer(res: ServerResponse, json: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createSignRoute(opts: SignRouteOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { sign, logger, http } = opts;
  const checkToken = internalTokenCheck(opts.internalToken);
  const v1Headers = Object.entries(v1DeprecationHeaders(V2_SIGN_PATH));
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const legacy = opts.v1 && path === V1_SIGN_PATH;
    if (path !== V2_SIGN_PATH && !legacy) return false;

    const locals = beginRequest(req, res, logger);
    res.once('finish', () =>
      http.observe('POST', path, res.statusCode, Number(process.hrtime.bigint() - locals.startedAt) / 1e9),
    );
    if (legacy) for (const [name, value] of v1Headers) res.setHeader(name, value);
    const log = () => locals.log;
    const failed = (err: unknown) => sendError(res, err);
    const run = (integrator: IntegratorView) => {
      locals.bind({ integratorId: integrator.record.id });
      readLimitedBody(req, res, opts.bodyLimitBytes, (bytes) => {
        const keyId = req.headers[API_KEY_ID_HEADER];
        let signed: Promise<string>;
        try {
          const body = parseJsonBody(decodeBody(bytes, req.headers['content-encoding'], opts.bodyLimitBytes));
          signed = sign({
            body,
            integrator,
            legacy,
            keyId: isSafeToken(keyId, 64) ? keyId : '',
            ...requestIds(req.headers[SERVICE_REQUEST_ID_HEADER], locals.requestId),
            log,
          });
        } catch (err) {
          return failed(err);
        }
        signed.then((json) => answer(res, json), failed);
      });
    };
    let integrator: MaybePromise<IntegratorView>;
    try {
      checkToken(req.headers);
      integrator = resolveIntegrator(opts.integrators, req.headers, log);
    } catch (err) {
      req.resume();
      failed(err);
      return true;
    }
    if (integrator instanceof Promise)
      integrator.then(run, (err: unknown) => {
        req.resume();
        failed(err);
      });
    else run(integrator);
    return true;
  };
}
