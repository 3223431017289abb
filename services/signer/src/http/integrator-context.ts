/**
 * Loads the integrator the gateway authenticated (`X-Integrator-Id`) before the body is read:
 * docs/decisions/0001-error-precedence.md puts UNAUTHORIZED ahead of every body check.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, INTEGRATOR_ID_HEADER, isIntegratorId, MalformedIntegratorError } from '@pmm/protocol';
import type { IntegratorSource, IntegratorView } from '../store/integrator-store';
import type { Logger, MaybePromise } from '@pmm/core';

/**
 * The integrator of a request (synchronous on a cache hit), or a thrown/rejected ApiError:
 * 401 UNAUTHORIZED when the header is absent or malformed, or when the record is missing or
 * disabled (the key was revoked between the gateway's check and now). When Redis cannot be
 * read: 503 SERVICE_UNAVAILABLE on both versions. (`/v1` has no 503 for a chain that is not
 * bootstrapped, but an outage is an outage: the gateway also answers 503 on `/v1` when the
 * signer is unreachable, and a client should retry either way.) A malformed record: 500
 * INTERNAL_ERROR (logged by the error handler).
 */
export function resolveIntegrator(
  source: IntegratorSource,
  headers: IncomingHttpHeaders,
  log: () => Logger | undefined,
): MaybePromise<IntegratorView> {
  const id = headers[INTEGRATOR_ID_HEADER];
  if (typeof id !== 'string' || id.length === 0)
    throw new ApiError('UNAUTHORIZED', 'missing integrator id (X-Integrator-Id)');
  if (!isIntegratorId(id)) throw new ApiError('UNAUTHORIZED', 'malformed integrator id (X-Integrator-Id)');
  const accept = (view: IntegratorView | undefined): IntegratorView => {
    if (!view) throw new ApiError('UNAUTHORIZED', 'unknown integrator');
    if (view.record.disabled) throw new ApiError('UNAUTHORIZED', 'integrator is disabled');
    return view;
  };
  const failed = (err: unknown): never => {
    if (err instanceof ApiError) throw err;
    // A record that exists but is unusable is the operator's error, not a transient one.
    if (err instanceof MalformedIntegratorError) throw err;
    log()?.error('integrator read failed', { integratorId: id, error: err });
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'integrator data is temporarily unavailable; retry shortly',
      {},
      {
        cause: err,
      },
    );
  };
  let found: MaybePromise<IntegratorView | undefined>;
  try {
    found = source.get(id);
  } catch (err) {
    return failed(err);
  }
  return found instanceof Promise ? found.then(accept, failed) : accept(found);
}
