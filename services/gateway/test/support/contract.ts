/**
 * The contract check: every response a test receives is validated against the OpenAPI
 * document (services/gateway/openapi/openapi.json, generated from the protocol's schemas by
 * src/openapi). The schema is picked by path, method and status; an unknown path (404) or an
 * undocumented method (405) uses the document's shared NotFound / MethodNotAllowed responses.
 * Headers the response declares `required` must be present.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Response } from 'supertest';
import Ajv2020 from 'ajv/dist/2020';

type Json = Record<string, unknown>;

const DOC_PATH = path.resolve(__dirname, '..', '..', 'openapi', 'openapi.json');
export const openapi = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
ajv.addSchema(openapi, 'openapi.json');

export const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const cache = new Map<string, ReturnType<typeof ajv.compile>>();

/** The node at a JSON pointer of the document (no `$ref` followed). */
export function nodeAt(pointer: string): unknown {
  let node: unknown = openapi;
  for (const part of pointer.split('/').slice(1)) {
    node = (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** Follows a `$ref` to components (responses and headers are refs or inline objects). */
export function deref(pointer: string): string {
  const node = nodeAt(pointer) as Json | undefined;
  if (node && typeof node.$ref === 'string') return node.$ref.slice(1);
  return pointer;
}

/** The object at a pointer, its `$ref` followed. */
export function resolve(pointer: string): Json {
  return nodeAt(deref(pointer)) as Json;
}

/** The JSON pointer of the response object documented for (method, path, status). */
export function responsePointer(method: string, urlPath: string, status: number): string {
  const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const op = `/paths/${escape(urlPath)}/${m}`;
  if (nodeAt(op) !== undefined) {
    const p = `${op}/responses/${status}`;
    // A documented path can still be absent from a deployment (e.g. /v1 without chain 8453).
    if (nodeAt(p) === undefined && status === 404) return '/components/responses/NotFound';
    if (nodeAt(p) === undefined) throw new Error(`contract: ${method} ${urlPath} does not document status ${status}`);
    return deref(p);
  }
  if (status === 404) return '/components/responses/NotFound';
  if (status === 405) return '/components/responses/MethodNotAllowed';
  throw new Error(`contract: ${method} ${urlPath} is not documented (status ${status})`);
}

function validator(pointer: string) {
  let v = cache.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `openapi.json#${pointer}` });
    cache.set(pointer, v);
  }
  return v;
}

/** Throws with ajv's errors unless the response matches the document. */
export function assertContract(method: string, url: string, res: Response): void {
  const urlPath = url.split('?')[0]!;
  const pointer = responsePointer(method, urlPath, res.status);
  const response = nodeAt(pointer) as Json;
  const headers = (response.headers ?? {}) as Json;
  for (const name of Object.keys(headers)) {
    const header = resolve(`${pointer}/headers/${escape(name)}`);
    if (header.required === true && res.headers[name.toLowerCase()] === undefined) {
      throw new Error(`contract: ${method} ${urlPath} ${res.status} lacks header ${name}`);
    }
  }
  if (method.toUpperCase() === 'HEAD') return;
  const content = (response.content as Json | undefined)?.['application/json'];
  if (!content) throw new Error(`contract: ${pointer} has no application/json content`);
  expectJson(res);
  const validate = validator(`${pointer}/content/application~1json/schema`);
  const body: unknown = JSON.parse(res.text);
  if (!validate(body)) {
    throw new Error(
      `contract: ${method} ${urlPath} ${res.status} body does not match ${pointer}: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
    );
  }
}

function expectJson(res: Response): void {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) throw new Error(`contract: content-type is "${type}", not JSON`);
}

/** Validates a value against a named component schema (examples, fixtures). */
export function validateSchema(name: string, value: unknown): string | undefined {
  const v = validator(`/components/schemas/${name}`);
  return v(value) ? undefined : ajv.errorsText(v.errors);
}

/** Validates a value against the schema at a pointer (a response's content schema). */
export function validateAt(pointer: string, value: unknown): string | undefined {
  const v = validator(pointer);
  return v(value) ? undefined : ajv.errorsText(v.errors);
}
