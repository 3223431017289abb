/**
 * The signer's Express routes besides health and metrics: `GET /internal/access`, where the
 * gateway's readiness check learns whether its internal token is accepted (204, else 401), and
 * 405 for the methods the sign paths do not answer (POST is the sign route's, sign-route.ts).
 */
import { Router } from 'express';
import { SIGNER_ACCESS_PATH } from '@pmm/protocol';
import { methodNotAllowed } from '@pmm/core';
import { requireInternalToken } from './internal-token';
import { V1_SIGN_PATH, V2_SIGN_PATH } from './sign-route';

export function internalRoutes(opts: { internalToken: string; v1: boolean }): Router {
  const router = Router();
  router
    .route(SIGNER_ACCESS_PATH)
    .get(requireInternalToken(opts.internalToken), (_req, res) => void res.status(204).end())
    .all(methodNotAllowed(['GET']));
  router.route(V2_SIGN_PATH).all(methodNotAllowed(['POST']));
  if (opts.v1) router.route(V1_SIGN_PATH).all(methodNotAllowed(['POST']));
  return router;
}
