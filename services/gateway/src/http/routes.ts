/**
 * The public paths and the methods each answers: app.ts routes by this table (a method not
 * listed is 405 with `Allow` from it), and the OpenAPI generator documents the same table.
 * `legacy` paths exist only when chain 8453 is served (docs/decisions.md#legacy-v1).
 */
export interface PublicRoute {
  path: string;
  /** The methods answered; `HEAD` wherever `GET` is (Express answers HEAD with the GET route). */
  methods: readonly ('GET' | 'HEAD' | 'POST')[];
  legacy: boolean;
}

export const ROUTES = {
  price: { path: '/v2/price', methods: ['GET', 'HEAD'], legacy: false },
  priceStream: { path: '/v2/price/stream', methods: ['GET', 'HEAD'], legacy: false },
  sign: { path: '/v2/swap/sign', methods: ['POST'], legacy: false },
  openapi: { path: '/v2/openapi.json', methods: ['GET', 'HEAD'], legacy: false },
  v1Price: { path: '/v1/price', methods: ['GET', 'HEAD'], legacy: true },
  v1Sign: { path: '/v1/swap/sign', methods: ['POST'], legacy: true },
} as const satisfies Record<string, PublicRoute>;

export type RouteName = keyof typeof ROUTES;
