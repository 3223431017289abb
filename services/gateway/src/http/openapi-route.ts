/**
 * `GET /v2/openapi.json`: the OpenAPI 3.1 document of the public API, kept in the repository
 * at services/gateway/openapi/openapi.json and served byte for byte. Like every route under
 * /v2/ it needs an API key (spec section 5).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, RequestHandler, Response } from 'express';

/** The document's path, the same from src/http (tests) and dist/http (production). */
export const OPENAPI_PATH = path.resolve(__dirname, '..', '..', 'openapi', 'openapi.json');

/** Reads the document once; throws at start-up when it is missing or not JSON. */
export function loadOpenApiDocument(file = OPENAPI_PATH): Buffer {
  const bytes = readFileSync(file);
  JSON.parse(bytes.toString('utf8'));
  return bytes;
}

export function openApiRoute(document: Buffer): RequestHandler {
  return (_req: Request, res: Response) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', document.length);
    res.end(document);
  };
}
