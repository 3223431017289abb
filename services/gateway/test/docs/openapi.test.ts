import { readFileSync } from 'node:fs';
import request from 'supertest';
import { ERROR_STATUS, type ErrorCode } from '@pmm/protocol';
import { OPENAPI_PATH, type Gateway } from '@pmm/gateway';
import { renderOpenApiDocument } from '../../src/docs/openapi/document';
import { ROUTES, type PublicRoute } from '../../src/http/public-routes';
import { call, harness, type Harness } from '../support/harness';
import { deref, escape, nodeAt, openapi, resolve, responsePointer, validateAt } from '../support/contract';

type Json = Record<string, unknown>;
interface Operation {
  deprecated?: boolean;
  responses: Record<string, Json>;
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  security: unknown;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Json> };
}

let h: Harness;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
});
afterAll(() => h.cleanup());

const doc = openapi as unknown as Doc;

/** Every (path, method, status) of the document with the pointer of its response object. */
function responses(): { path: string; method: string; status: number; pointer: string }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) =>
      Object.keys(op.responses).map((status) => ({
        path,
        method,
        status: Number(status),
        pointer: `/paths/${escape(path)}/${method}/responses/${status}`,
      })),
    ),
  );
}

/** The headers a response object declares, with their `required` flag ($refs followed). */
function headers(pointer: string): Record<string, boolean> {
  const target = deref(pointer);
  const declared = (resolve(target).headers ?? {}) as Json;
  return Object.fromEntries(
    Object.keys(declared).map((name) => [name, resolve(`${target}/headers/${escape(name)}`).required === true]),
  );
}

/** The error codes a response's JSON schema admits (one `$ref`, or `anyOf` of them). */
function codes(pointer: string): string[] {
  const schema = resolve(pointer).content as Record<string, { schema: Json }> | undefined;
  const s = schema?.['application/json']?.schema;
  const refs = (s?.anyOf as Json[] | undefined) ?? (s ? [s] : []);
  return refs.flatMap((ref) => {
    if (typeof ref.$ref !== 'string') return [];
    const target = resolve(ref.$ref.slice(1)) as { properties?: { error?: Json } };
    const code = (target.properties?.error?.properties as { code?: { const?: string } } | undefined)?.code?.const;
    return code ? [code] : [];
  });
}

describe('OpenAPI document', () => {
  it('behavior: served at /v2/openapi.json byte for byte, with an API key', async () => {
    const key = await h.apiKey();
    const res = await call(request(gw.app).get('/v2/openapi.json').set('X-API-KEY', key));
    expect(res.status).toBe(200);
    expect(res.text).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });

  it('error: without a key it is 401 like every /v2 route', async () => {
    expect((await call(request(gw.app).get('/v2/openapi.json'))).status).toBe(401);
  });

  it('behavior: the committed file is the generator output (run `npm run openapi` after a change)', () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(renderOpenApiDocument());
  });

  it('behavior: documents every route of the route table with its method, and the X-API-KEY scheme', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      Object.values(ROUTES)
        .map((r) => r.path)
        .sort(),
    );
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
    expect(doc.paths['/v1/price']?.get?.deprecated).toBe(true);
    expect(doc.paths['/v1/swap/sign']?.post?.deprecated).toBe(true);
  });

  it('behavior: every path documents 405 with Allow, and its answer names the methods of the route table', () => {
    for (const route of Object.values(ROUTES) as PublicRoute[]) {
      const method = route.methods.includes('POST') ? 'post' : 'get';
      const pointer = `/paths/${escape(route.path)}/${method}/responses/405`;
      expect({ path: route.path, codes: codes(pointer), allow: headers(pointer).Allow }).toEqual({
        path: route.path,
        codes: ['METHOD_NOT_ALLOWED'],
        allow: true,
      });
      // The shared MethodNotAllowed response, its description overridden per path.
      const description = String((nodeAt(pointer) as Json).description);
      expect(description).toContain(route.methods.join(', '));
    }
  });

  it('behavior: every error code appears, always with its status', () => {
    const seen = new Map<string, Set<number>>();
    for (const { status, pointer } of responses()) {
      for (const code of codes(pointer)) seen.set(code, new Set([...(seen.get(code) ?? []), status]));
    }
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect({ code, statuses: [...(seen.get(code) ?? [])] }).toEqual({ code, statuses: [status] });
    }
    expect(codes(responsePointer('get', '/v2/price', 400)).sort()).toEqual(
      (['MALFORMED_REQUEST', 'UNSUPPORTED_CHAIN', 'UNSUPPORTED_FIELD'] as ErrorCode[]).sort(),
    );
  });

  it('behavior: every response requires X-Request-Id; route answers the RateLimit headers; 429 Retry-After; 503 declares it; /v1 Deprecation and Link', () => {
    for (const { path, status, pointer } of responses()) {
      const h = headers(pointer);
      expect({ path, status, rid: h['X-Request-Id'] }).toEqual({ path, status, rid: true });
      if (status === 200 || status === 403 || status === 422) {
        expect({ path, status, limit: h['RateLimit-Limit'], reset: h['RateLimit-Reset'] }).toEqual({
          path,
          status,
          limit: true,
          reset: true,
        });
      }
      if (status === 429) expect(h['Retry-After']).toBe(true);
      if (status === 503) expect(h['Retry-After']).toBeDefined();
      // Answers before routing (the connection is closed) and 404 come before the /v1 prefix: where a
      // status has such an answer too, Deprecation and Link are declared but not required.
      if (path.startsWith('/v1') && h.Connection !== true && status !== 404) {
        expect({ path, status, deprecation: h.Deprecation, link: h.Link }).toEqual({
          path,
          status,
          deprecation: h.Connection === undefined,
          link: h.Connection === undefined,
        });
      }
    }
  });

  it('behavior: every example validates against its schema', () => {
    let checked = 0;
    for (const { path, method, status } of responses()) {
      const pointer = responsePointer(method, path, status);
      const content = (resolve(pointer).content as Record<string, { examples?: Record<string, { value: unknown }> }>)?.[
        'application/json'
      ];
      for (const [name, ex] of Object.entries(content?.examples ?? {})) {
        expect({
          path,
          status,
          name,
          error: validateAt(`${pointer}/content/application~1json/schema`, ex.value),
        }).toEqual({ path, status, name, error: undefined });
        checked++;
      }
    }
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const ex of Object.values(op.requestBody?.content['application/json']?.examples ?? {})) {
          const ptr = `/paths/${escape(path)}/${method}/requestBody/content/application~1json/schema`;
          expect(validateAt(ptr, ex.value)).toBeUndefined();
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('error: the contract check rejects a body that breaks the document (it can fail)', () => {
    const pointer = responsePointer('get', '/v2/price', 200);
    const book = { chainId: 8453, blockNumber: 1, blockTime: 1, pairs: [] };
    expect(validateAt(`${pointer}/content/application~1json/schema`, book)).toBeUndefined();
    expect(validateAt(`${pointer}/content/application~1json/schema`, { ...book, extra: 1 })).toBeDefined();
    expect(validateAt(`${pointer}/content/application~1json/schema`, { ...book, chainId: 1 })).toBeDefined();
    const v1 = responsePointer('get', '/v1/price', 200);
    expect(validateAt(`${v1}/content/application~1json/schema`, book)).toBeDefined();
    const err = responsePointer('get', '/v2/price', 422);
    const envelope = (code: string) => ({ error: { code, message: 'x', requestId: 'r' } });
    expect(validateAt(`${err}/content/application~1json/schema`, envelope('VALIDATION_ERROR'))).toBeUndefined();
    expect(validateAt(`${err}/content/application~1json/schema`, envelope('UNSUPPORTED_CHAIN'))).toBeDefined();
  });
});
