/**
 * The HTTP shell of every port of every service: one table of routes (path, methods, the steps
 * each takes) served by Express's Router, used directly as the node:http request listener.
 *
 * The table answers, itself and in the envelope: 404 for an unknown path, 405 (with `Allow`)
 * for a known path and another method, CORS preflights on the routes that take CORS when it is
 * configured, and every error a step passes on (core's errorHandler). HEAD is answered by a
 * route's GET steps (Node sends no body). Each route is defined once: there is no second way
 * to a route, and the OpenAPI document reads the same declarations.
 *
 * Why the Router and not an Express app: measured (docs/decisions/0013-one-http-shell-per-service.md),
 * the app layer (its request/response prototypes, query parser and per-request set-up) costs
 * about five times the CPU of a bare node:http answer, the Router alone (with the request frame) about 1.5 times. Steps
 * therefore use node's request and response (`res.statusCode`, `res.setHeader`, `res.end`), not
 * the app's helpers (`res.json`, `req.query`), which do not exist here.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { ApiError } from '@pmm/protocol';
import { sendErrorEnvelope } from './error-handler';

/** One step of a route: answer, or call `next()` (or `next(err)` for an error answer). */
export type Step = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** A method a route declares; `GET` also answers `HEAD`. */
export type RouteMethod = 'GET' | 'HEAD' | 'POST';

export interface Route {
  path: string;
  methods: readonly RouteMethod[];
  /** Run in order for each declared method. */
  steps: readonly Step[];
  /** Takes CORS when the table has a CORS step (the public API's routes). */
  cors?: boolean;
}

export interface RouteTableOptions {
  /** Runs first for every request, routed or not (core requestFrame). */
  frame: Step;
  routes: readonly Route[];
  /** The CORS step (answers preflights itself; the `cors` package), when CORS is configured. */
  cors?: Step;
  /**
   * Steps for every request under a path prefix (`/` for all), after the frame and before the
   * routes, so that they also shape the 404 and 405 answers (the `/v1` headers, a Host check).
   */
  mounts?: readonly (readonly [prefix: string, step: Step])[];
}

/** The path of a request, without its query. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The text after `?`, or undefined when the URL has none. */
export function queryOf(req: IncomingMessage): string | undefined {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q === -1 ? undefined : url.slice(q + 1);
}

const methodNotAllowed =
  (allow: string): Step =>
  (req, _res, next) =>
    next(new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here`, { Allow: allow }));

const notFound: Step = (req, _res, next) =>
  next(new ApiError('NOT_FOUND', `no route for ${req.method} ${pathOf(req)}`));

/** Renders the error in the envelope; after the answer has started, only ends the connection. */
function answerError(err: unknown, res: ServerResponse): void {
  if (!res.headersSent) return sendErrorEnvelope(res, err);
  if (!res.writableEnded) res.destroy();
}

const errorStep: ErrorRequestHandler = (err, _req, res) => answerError(err, res);

/** The request listener of a table (serve it with core's listen()). */
export function routeTable(opts: RouteTableOptions): RequestListener {
  const router = Router({ caseSensitive: true, strict: true });
  const asHandlers = (steps: readonly Step[]) => steps as unknown as RequestHandler[];
  router.use(asHandlers([opts.frame]));
  for (const [prefix, step] of opts.mounts ?? []) router.use(prefix, asHandlers([step]));
  for (const route of opts.routes) {
    const cors = route.cors && opts.cors ? [opts.cors] : [];
    const entry = router.route(route.path);
    const allow = methodNotAllowed(route.methods.join(', '));
    if (cors.length > 0) entry.options(asHandlers([...cors, allow]));
    for (const method of route.methods) {
      if (method === 'HEAD') continue; // answered by GET
      entry[method === 'GET' ? 'get' : 'post'](asHandlers([...cors, ...route.steps]));
    }
    entry.all(asHandlers([allow]));
  }
  router.use(asHandlers([notFound]));
  router.use(errorStep);
  // The Router is typed for Express's own request and response; it needs only node's.
  const handle = router as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
    done: (err?: unknown) => void,
  ) => void;
  return (req, res) =>
    handle(req, res, (err?: unknown) => answerError(err ?? new ApiError('NOT_FOUND', 'not found'), res));
}
