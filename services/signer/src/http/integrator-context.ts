/**
 * Loads the integrator the gateway authenticated (`X-Integrator-Id`) before the body is read:
 * docs/decisions.md#error-precedence puts UNAUTHORIZED ahead of every body check.
 */
import type { RequestHandler, Response } from 'express';
import { ApiError, INTEGRATOR_ID_HEADER, isIntegratorId, MalformedIntegratorError } from '@pmm/protocol';
import type { IntegratorSource, IntegratorView } from '../store/integrator-store';

/** The integrator set by {@link requireIntegrator}. */
export function integratorOf(res: Response): IntegratorView {
  return (res.locals as { integrator: IntegratorView }).integrator;
}

/**
 * 401 UNAUTHORIZED when the header is absent or malformed, or when the record is missing or
 * disabled (the key was revoked between the gateway's check and now). When Redis cannot be
 * read: 503 SERVICE_UNAVAILABLE on both versions. (`/v1` has no 503 for a chain that is not
 * bootstrapped, but an outage is an outage: the gateway also answers 503 on `/v1` when the
 * signer is unreachable, and a client should retry either way.) A malformed record: 500
 * INTERNAL_ERROR (logged by the error handler).
 */
export function requireIntegrator(source: IntegratorSource): RequestHandler {
  return async (req, res, next) => {
    const id = req.headers[INTEGRATOR_ID_HEADER];
    if (typeof id !== 'string' || id.length === 0)
      return next(new ApiError('UNAUTHORIZED', 'missing integrator id (X-Integrator-Id)'));
    if (!isIntegratorId(id)) return next(new ApiError('UNAUTHORIZED', 'malformed integrator id (X-Integrator-Id)'));
    let view: IntegratorView | undefined;
    try {
      view = await source.get(id);
    } catch (err) {
      if (err instanceof ApiError) return next(err);
      // A record that exists but is unusable is the operator's error, not a transient one.
      if (err instanceof MalformedIntegratorError) return next(err);
      res.locals.log?.error('integrator read failed', { integratorId: id, error: err });
      return next(new ApiError('SERVICE_UNAVAILABLE', 'integrator data is temporarily unavailable; retry shortly'));
    }
    if (!view) return next(new ApiError('UNAUTHORIZED', 'unknown integrator'));
    if (view.record.disabled) return next(new ApiError('UNAUTHORIZED', 'integrator is disabled'));
    res.locals.integrator = view;
    res.locals.log = res.locals.log?.child({ integratorId: id });
    next();
  };
}
