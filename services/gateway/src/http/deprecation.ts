/**
 * Headers of every legacy `/v1` response (docs/decisions.md#legacy-v1): `Deprecation: true`
 * and a `Link` to the successor route. Mounted on the `/v1` prefix before anything can
 * answer, so that 401, 404, 405, 413 and 429 answers carry them too.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { v1DeprecationHeaders } from '@pmm/protocol';
import { ROUTES } from './routes';

/** Keyed by the path below the /v1 mount point. */
const SUCCESSORS: Record<string, Record<string, string>> = {
  [ROUTES.v1Price.path.slice('/v1'.length)]: v1DeprecationHeaders(ROUTES.price.path),
  [ROUTES.v1Sign.path.slice('/v1'.length)]: v1DeprecationHeaders(ROUTES.sign.path),
};
const OTHER = v1DeprecationHeaders(ROUTES.openapi.path);

export function deprecationHeaders(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    // req.path is relative to the /v1 mount point here.
    for (const [name, value] of Object.entries(SUCCESSORS[req.path] ?? OTHER)) res.setHeader(name, value);
    next();
  };
}
