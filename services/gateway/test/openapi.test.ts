import { readFileSync } from 'node:fs';
import request from 'supertest';
import { ERROR_STATUS } from '@pmm/core';
import { OPENAPI_PATH, type Gateway } from '@pmm/gateway';
import { call, harness, type Harness } from './support/harness';
import { openapi, responsePointer, validateAt } from './support/contract';

/** The parts of an OpenAPI document these tests read. */
interface Schema {
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  enum?: string[];
}
interface Content {
  schema?: Schema;
  examples?: Record<string, { value: unknown }>;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, Content>;
}
interface Operation {
  deprecated?: boolean;
  responses: Record<string, ResponseObject>;
  requestBody?: { content: Record<string, Content> };
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  security: unknown;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, Schema>;
    responses: Record<string, ResponseObject>;
  };
}

let h: Harness;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
});
afterAll(() => h.cleanup());

const doc = openapi as unknown as Doc;

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

  it('behavior: documents every public path with its method, and the X-API-KEY scheme', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/price',
      '/v1/swap/sign',
      '/v2/openapi.json',
      '/v2/price',
      '/v2/price/stream',
      '/v2/swap/sign',
    ]);
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
    expect(doc.paths['/v1/price']?.get?.deprecated).toBe(true);
    expect(doc.paths['/v1/swap/sign']?.post?.deprecated).toBe(true);
  });

  it('behavior: every error code appears with its status, and the error enum is the core list', () => {
    expect([...(doc.components.schemas.ErrorResponse?.properties?.error?.properties?.code?.enum ?? [])].sort()).toEqual(
      Object.keys(ERROR_STATUS).sort(),
    );
    const seen = new Map<string, Set<number>>();
    const visit = (response: ResponseObject | undefined, status: number) => {
      const schema = response?.content?.['application/json']?.schema;
      const codes = schema?.allOf?.[1]?.properties?.error?.properties?.code?.enum;
      for (const code of codes ?? []) seen.set(code, new Set([...(seen.get(code) ?? []), status]));
    };
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const [status, response] of Object.entries(op.responses))
          visit(response.$ref ? undefined : response, Number(status));
      }
    }
    // Shared responses (answered before or without routing) carry their status in x-status.
    for (const response of Object.values(doc.components.responses)) {
      const status = (response as { 'x-status'?: number })['x-status'];
      expect(typeof status).toBe('number');
      visit(response, status!);
      expect(response.headers?.['X-Request-Id']?.required).toBe(true);
    }
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect({ code, statuses: [...(seen.get(code) ?? [])] }).toEqual({ code, statuses: [status] });
    }
  });

  it('behavior: every documented response requires X-Request-Id; authenticated ones the RateLimit headers; 429 Retry-After; /v1 Deprecation and Link', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          const headers = Object.entries(r.headers ?? {})
            .filter(([, hd]) => hd.required === true)
            .map(([n]) => n);
          const declared = Object.keys(r.headers ?? {});
          // 401 comes before the limiter; 500 and 503 may (key store down, request timeout),
          // and so may 408 (Node's own request timeout answers before any route).
          if (status !== '401')
            expect(declared).toEqual(
              expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
            );
          if (!['401', '408', '500', '503'].includes(status))
            expect(headers).toEqual(expect.arrayContaining(['RateLimit-Limit']));
          expect({ path, method, status, rid: headers.includes('X-Request-Id') }).toEqual({
            path,
            method,
            status,
            rid: true,
          });
          if (status === '429') expect(headers).toContain('Retry-After');
          if (path.startsWith('/v1')) expect(headers).toEqual(expect.arrayContaining(['Deprecation', 'Link']));
        }
      }
    }
  });

  it('behavior: every example validates against its schema', () => {
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          const pointer = responsePointer(method, path, Number(status));
          const content = r.content?.['application/json'];
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
        const reqContent = op.requestBody?.content?.['application/json'];
        for (const ex of Object.values(reqContent?.examples ?? {})) {
          const ptr = `/paths/${path.replace(/\//g, '~1')}/${method}/requestBody/content/application~1json/schema`;
          expect(validateAt(ptr, ex.value)).toBeUndefined();
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('error: the contract check rejects a body that breaks the document (it can fail)', () => {
    const pointer = responsePointer('get', '/v2/price', 200);
    expect(
      validateAt(`${pointer}/content/application~1json/schema`, {
        chainId: 8453,
        blockNumber: 1,
        blockTime: 1,
        pairs: [],
        extra: 1,
      }),
    ).toBeDefined();
    expect(
      validateAt(`${pointer}/content/application~1json/schema`, {
        chainId: 1,
        blockNumber: 1,
        blockTime: 1,
        pairs: [],
      }),
    ).toBeDefined();
    const v1 = responsePointer('get', '/v1/price', 200);
    expect(
      validateAt(`${v1}/content/application~1json/schema`, { chainId: 8453, blockNumber: 1, blockTime: 1, pairs: [] }),
    ).toBeDefined();
    const err = responsePointer('get', '/v2/price', 422);
    expect(
      validateAt(`${err}/content/application~1json/schema`, {
        error: { code: 'UNSUPPORTED_CHAIN', message: 'x', requestId: 'r' },
      }),
    ).toBeDefined();
  });
});
