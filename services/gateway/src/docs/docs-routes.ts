/**
 * `GET /docs`: the API reference as a page, the OpenAPI document rendered by Redoc's standalone
 * bundle (docs/decisions/0017-the-api-reference-page-redoc-served-by-the-gateway.md). No API key: the
 * page, its script and the document it renders (`/docs/openapi.json`, the same bytes as
 * `/v2/openapi.json`) hold nothing secret, and an integrator reads them before having a key.
 *
 * Everything comes from this process: the bundle is the copy the build takes from the pinned
 * `redoc` development dependency into `assets/` (scripts/copy-redoc-bundle.mjs, which checks its
 * SHA-256; the image carries that folder, not the package and its React), served under a path
 * that names its version, so that it can be cached as immutable. The one thing the bundle would
 * fetch from elsewhere, the side menu's badge image, is replaced (REMOTE_BADGE). The page has its own Content-Security-Policy;
 * every other answer keeps the API's `default-src 'none'`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import accepts from 'accepts';
import type { Route, Step } from '@pmm/core';

export const DOCS_PATH = '/docs';
export const DOCS_DOCUMENT_PATH = '/docs/openapi.json';

/** Written by the build (scripts/copy-redoc-bundle.mjs); missing, the gateway does not start. */
const REDOC_ASSETS_DIR = path.resolve(__dirname, '..', '..', 'assets');
const REDOC_VERSION = (
  JSON.parse(readFileSync(path.join(REDOC_ASSETS_DIR, 'redoc-bundle.json'), 'utf8')) as { version: string }
).version;
const REDOC_BUNDLE_FILE = path.join(REDOC_ASSETS_DIR, 'redoc.standalone.js');
/** Versioned by path: a new Redoc is a new URL, so the old one may be cached forever. */
export const REDOC_BUNDLE_PATH = `/docs/assets/redoc-${REDOC_VERSION}/redoc.standalone.js`;

/**
 * Redoc 2 renders an `<img>` of its logo from its CDN in the side menu, whatever the options.
 * The CSP would block it, but the browser would still log a violation on every visit: the URL is
 * replaced in the bundle we serve by an empty inline image (no quote in it: the URL sits in a
 * JavaScript string). The page test fails if a new Redoc fetches anything from elsewhere.
 */
export const REMOTE_BADGE = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';

/**
 * What Redoc needs, and nothing else:
 * - script-src 'self': the bundle; the page has no inline script (Redoc starts itself from
 *   the `<redoc spec-url>` element);
 * - connect-src 'self': the bundle fetches the document;
 * - style-src 'unsafe-inline': Redoc styles itself with styled-components, which writes
 *   `<style>` elements at run time, and React sets `style` attributes (no nonce reaches either;
 *   there is no stylesheet to load);
 * - worker-src blob:: the search index runs in a worker the bundle creates from a Blob;
 * - img-src data:: the only image, the badge in place of REMOTE_BADGE.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "style-src 'unsafe-inline'",
  'worker-src blob:',
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** HTML-escapes a text for an element's content. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page. URLs are relative to `/docs` (so the page also works behind a path prefix). The
 * options open every response and schema: an integrator (and a search with the browser's Find)
 * sees every error code without clicking. The empty icon spares the browser a request that
 * would only be a 404.
 */
function docsPage(title: string): Buffer {
  return Buffer.from(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="${DOCS_DOCUMENT_PATH.slice(1)}" expand-responses="all" schema-expansion-level="all" json-sample-expand-level="all" path-in-middle-panel="true"></redoc>
<script src="${REDOC_BUNDLE_PATH.slice(1)}"></script>
</body>
</html>
`);
}

function send(res: ServerResponse, type: string, cacheControl: string, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

export interface DocsRoutes {
  page: Step;
  document: Step;
  bundle: Step;
}

/** The three handlers, over the OpenAPI document's bytes (the gateway's `openapi`). */
export function docsRoutes(openapi: Buffer): DocsRoutes {
  const info = (JSON.parse(openapi.toString('utf8')) as { info?: { title?: string } }).info;
  const page = docsPage(info?.title ?? 'API');
  // 1.1 MB of script, about a third gzipped; read and compressed on first use, once.
  let bundle: { plain: Buffer; gzip: Buffer } | undefined;
  const loadBundle = () => {
    if (!bundle) {
      const plain = Buffer.from(readFileSync(REDOC_BUNDLE_FILE, 'utf8').replaceAll(REMOTE_BADGE, EMPTY_IMAGE));
      bundle = { plain, gzip: gzipSync(plain) };
    }
    return bundle;
  };
  return {
    page: (_req, res) => {
      res.setHeader('Content-Security-Policy', DOCS_CSP);
      // The page and the document change with a deployment: revalidated, never stale.
      send(res, 'text/html; charset=utf-8', 'no-cache', page);
    },
    document: (_req, res) => {
      send(res, 'application/json; charset=utf-8', 'no-cache', openapi);
    },
    bundle: (req, res) => {
      const { plain, gzip } = loadBundle();
      res.setHeader('Vary', 'Accept-Encoding');
      // Only to a client that asked (an absent Accept-Encoding would allow it, but surprise curl).
      const gzipped =
        req.headers['accept-encoding'] !== undefined && accepts(req).encodings(['gzip', 'identity']) === 'gzip';
      if (gzipped) res.setHeader('Content-Encoding', 'gzip');
      send(res, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable', gzipped ? gzip : plain);
    },
  };
}

/** The three keyless routes of the public port. */
export function docsRouteTable(openapi: Buffer): Route[] {
  const docs = docsRoutes(openapi);
  return [
    { path: DOCS_PATH, methods: ['GET', 'HEAD'], steps: [docs.page] },
    { path: DOCS_DOCUMENT_PATH, methods: ['GET', 'HEAD'], steps: [docs.document] },
    { path: REDOC_BUNDLE_PATH, methods: ['GET', 'HEAD'], steps: [docs.bundle] },
  ];
}
