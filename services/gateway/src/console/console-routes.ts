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
import { ApiError } from '@pmm/protocol';
import { sendBytes, type Route, type Step } from '@pmm/core';
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

/**
 * The console's routes. At most `maxViewers` event streams are open at once (each holds a
 * socket and a share of the feed's work); more is 429 with Retry-After.
 */
export function consoleRoutes(feed: ConsoleFeed, maxViewers: number, dir = CONSOLE_ASSETS_DIR): Route[] {
  const headers = securityHeaders(CONSOLE_CSP);
  const withHeaders: Step = (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
  const routes: Route[] = Object.entries(ASSETS).map(([route, asset]) => {
    const bytes = readFileSync(path.join(dir, asset.file));
    const contentHeaders = { 'Content-Type': asset.type, 'Cache-Control': 'no-cache' };
    return {
      path: route,
      methods: ['GET', 'HEAD'],
      steps: [withHeaders, (_req, res) => sendBytes(res, 200, bytes, contentHeaders)],
    };
  });
  routes.push({
    path: '/console/events',
    methods: ['GET', 'HEAD'],
    steps: [
      withHeaders,
      (req, res, next) => {
        if (req.method !== 'HEAD' && feed.size >= maxViewers) {
          return next(
            new ApiError('RATE_LIMITED', `the console has ${maxViewers} viewers (CONSOLE_MAX_VIEWERS)`, {
              'Retry-After': '10',
            }),
          );
        }
        res.writeHead(200, EVENTS_HEADERS);
        if (req.method === 'HEAD') return void res.end();
        res.flushHeaders();
        feed.attach(res);
      },
    ],
  });
  return routes;
}
