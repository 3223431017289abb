/**
 * Headers of every legacy `/v1` response (docs/decisions/0030-legacy-v1.md): `Deprecation: true`
 * and a `Link` to the successor route. Mounted on the `/v1` prefix of the route table, before
 * anything can answer, so that 401, 404, 405, 413 and 429 answers carry them too.
 */
import { v1DeprecationHeaders } from '@pmm/protocol';
import { pathOf, type Step } from '@pmm/core';
import { ROUTES } from './public-routes';

const SUCCESSORS: Record<string, [string, string][]> = {
  [ROUTES.v1Price.path.slice('/v1'.length)]: Object.entries(v1DeprecationHeaders(ROUTES.price.path)),
  [ROUTES.v1Sign.path.slice('/v1'.length)]: Object.entries(v1DeprecationHeaders(ROUTES.sign.path)),
};
const OTHER = Object.entries(v1DeprecationHeaders(ROUTES.openapi.path));

/** The step mounted on `/v1` (the path it sees is relative to the mount point). */
export const v1Headers: Step = (req, res, next) => {
  for (const [name, value] of SUCCESSORS[pathOf(req)] ?? OTHER) res.setHeader(name, value);
  next();
};
