/**
 * The operator console on the operator port: `GET /console` (the page), its script and style
 * (files of this package's `console/` folder, read once at start-up: the page loads nothing
 * from elsewhere and works offline), and `GET /console/events` (console-feed.ts).
 *
 * Every answer carries helmet's headers with the page's own Content-Security-Policy: its
 * script, style and event stream from this origin only, no inline script or style, nothing
 * else (the chart is SVG drawn by the script). Other methods are 405, other paths 404, in the
 * envelope like every route.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '@pmm/core';
import { securityHeaders } from '../http/security-headers';
import type { ConsoleFeed } from './console-feed';

/** The page's folder, the same from src/console (tests) and dist/console (production). */
export const CONSOLE_ASSETS_DIR = path.resolve(__dirname, '..', '..', 'console');

const ASSETS = {
  '/console': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  // Browsers ask for an icon; without one every page load logs a 404.
  '/console/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
} as const;

const CONSOLE_CSP: Record<string, string[]> = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  connectSrc: ["'self'"],
  imgSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

const EVENTS_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Accel-Buffering': 'no',
};

export function consoleRoutes(feed: ConsoleFeed, dir = CONSOLE_ASSETS_DIR): Router {
  const router = Router({ caseSensitive: true, strict: true });
  const headers = securityHeaders(CONSOLE_CSP);
  router.use('/console', (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  });
  for (const [route, asset] of Object.entries(ASSETS)) {
    const bytes = readFileSync(path.join(dir, asset.file));
    const serve: RequestHandler = (_req, res) => {
      res.status(200).set({ 'Content-Type': asset.type, 'Cache-Control': 'no-cache' }).send(bytes);
    };
    router
      .route(route)
      .get(serve)
      .all(methodNotAllowed(['GET', 'HEAD']));
  }
  router
    .route('/console/events')
    .get((req, res) => {
      res.writeHead(200, EVENTS_HEADERS);
      if (req.method === 'HEAD') return void res.end();
      res.flushHeaders();
      feed.attach(res);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
