/**
 * Headers of every legacy `/v1` response (docs/decisions.md#legacy-v1): `Deprecation: true`
 * and a `Link` to the successor route. Mounted on the `/v1` prefix before anything can
 * answer, so that 401, 404, 405, 413 and 429 answers carry them too.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

const SUCCESSORS: Record<string, string> = {
  '/price': '</v2/price>; rel="successor-version"',
  '/swap/sign': '</v2/swap/sign>; rel="successor-version"',
};

export function deprecationHeaders(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Deprecation', 'true');
    // req.path is relative to the /v1 mount point here.
    res.setHeader('Link', SUCCESSORS[req.path] ?? '</v2/openapi.json>; rel="successor-version"');
    next();
  };
}
