/**
 * The API's routes: paths and methods. The public port's route table is built from this
 * declaration (app.ts binds each name to its feature's last step; every route here takes the
 * CORS, key and rate-limit steps first), and the OpenAPI generator documents the same
 * declaration. `legacy` paths exist only when chain 8453 is served (docs/decisions/0030-legacy-v1.md).
 * The keyless routes (`/healthz`, `/docs`) are declared by their features.
 */
import type { RouteMethod } from '@pmm/core';

export interface PublicRoute {
  path: string;
  /** The methods answered; `HEAD` wherever `GET` is (answered by the GET steps). */
  methods: readonly RouteMethod[];
  legacy: boolean;
}

export const ROUTES = {
  price: { path: '/v2/price', methods: ['GET', 'HEAD'], legacy: false },
  priceStream: { path: '/v2/price/stream', methods: ['GET', 'HEAD'], legacy: false },
  sign: { path: '/v2/swap/sign', methods: ['POST'], legacy: false },
  fills: { path: '/v2/fills', methods: ['GET', 'HEAD'], legacy: false },
  openapi: { path: '/v2/openapi.json', methods: ['GET', 'HEAD'], legacy: false },
  v1Price: { path: '/v1/price', methods: ['GET', 'HEAD'], legacy: true },
  v1Sign: { path: '/v1/swap/sign', methods: ['POST'], legacy: true },
} as const satisfies Record<string, PublicRoute>;

export type RouteName = keyof typeof ROUTES;
