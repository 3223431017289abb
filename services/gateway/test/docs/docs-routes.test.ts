import { readFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { OPENAPI_PATH, type Gateway } from '@pmm/gateway';
import { DOCS_CSP, DOCS_DOCUMENT_PATH, REDOC_BUNDLE_PATH, REMOTE_BADGE } from '../../src/docs/docs-routes';
import { harness, type Harness } from '../support/harness';

/** helmet's rendering of the API's policy (security-headers.ts), on every answer but the page. */
const API_CSP = "default-src 'none';frame-ancestors 'none'";

let h: Harness;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
});
afterAll(() => h.cleanup());

/** GETs `path` from a served gateway and returns the body as it came over the wire (supertest would decompress it). */
async function raw(path: string, acceptEncoding: string): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  const base = await h.listen(gw.app);
  return new Promise((resolve, reject) => {
    get(`${base}${path}`, { headers: { 'Accept-Encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('GET /docs (the API reference page)', () => {
  it('behavior: the page needs no key and has its own CSP, the API security headers otherwise', async () => {
    const res = await request(gw.app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.etag).toBeUndefined();
    // The page loads the versioned bundle and the keyless document, both relative to /docs.
    expect(res.text).toContain(`<script src="${REDOC_BUNDLE_PATH.slice(1)}"></script>`);
    expect(res.text).toContain(`spec-url="${DOCS_DOCUMENT_PATH.slice(1)}"`);
    expect(res.text).not.toMatch(/<script>|<style|\sstyle=|https?:\/\//);
    expect(res.text).toContain('<title>PMM quote service — API reference</title>');
  });

  it('invariant: the CSP allows scripts and connections from the page origin only, never inline or eval', () => {
    const directives = Object.fromEntries(
      DOCS_CSP.split('; ').map((d) => {
        const [name, ...values] = d.split(' ');
        return [name, values];
      }),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(DOCS_CSP).not.toMatch(/unsafe-eval|\*|https?:/);
  });

  it('behavior: /docs/openapi.json is the OpenAPI document byte for byte, without a key; /v2/openapi.json still needs one', async () => {
    const res = await request(gw.app).get('/docs/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(res.headers['content-security-policy']).toBe(API_CSP);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    expect((await request(gw.app).get('/v2/openapi.json')).status).toBe(401);
  });

  it('behavior: the Redoc bundle (the pinned one, as the build copied it) is served as JavaScript, cached as immutable, gzipped on request', async () => {
    const original = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
    expect(original).toContain(REMOTE_BADGE);
    const file = Buffer.from(original.replaceAll(REMOTE_BADGE, ''));
    const { version } = JSON.parse(readFileSync(require.resolve('redoc/package.json'), 'utf8')) as { version: string };
    expect(REDOC_BUNDLE_PATH).toBe(`/docs/assets/redoc-${version}/redoc.standalone.js`);

    const plain = await raw(REDOC_BUNDLE_PATH, 'identity');
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['x-content-type-options']).toBe('nosniff');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    // Redoc's bundle but for its badge's URL (an inline image instead).
    const served = plain.body.toString('utf8');
    expect(served).not.toContain(REMOTE_BADGE);
    expect(served.replaceAll(/data:image\/gif;base64,[A-Za-z0-9+/=]+/g, '')).toBe(file.toString('utf8'));

    const gzipped = await raw(REDOC_BUNDLE_PATH, 'gzip, deflate, br');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(Number(gzipped.headers['content-length'])).toBeLessThan(plain.body.length / 2);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
  });

  it('behavior: HEAD answers the headers of GET without a body', async () => {
    for (const path of ['/docs', '/docs/openapi.json', REDOC_BUNDLE_PATH]) {
      const get = await request(gw.app).get(path).set('Accept-Encoding', 'gzip');
      const head = await request(gw.app).head(path).set('Accept-Encoding', 'gzip');
      expect({ path, status: head.status, type: head.headers['content-type'] }).toEqual({
        path,
        status: 200,
        type: get.headers['content-type'],
      });
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.headers['content-encoding']).toBe(get.headers['content-encoding']);
      expect(head.text ?? '').toBe('');
    }
    expect((await request(gw.app).head('/docs')).headers['content-security-policy']).toBe(DOCS_CSP);
  });

  it('error: a wrong method is 405 with Allow, in the envelope, with the API CSP', async () => {
    for (const path of ['/docs', '/docs/openapi.json', REDOC_BUNDLE_PATH]) {
      const res = await request(gw.app).post(path).set('X-Request-Id', 'docs-405');
      expect({ path, status: res.status, allow: res.headers.allow }).toEqual({ path, status: 405, allow: 'GET, HEAD' });
      expect(res.body).toEqual({
        error: { code: 'METHOD_NOT_ALLOWED', message: 'POST is not allowed here', requestId: 'docs-405' },
      });
      expect(res.headers['content-security-policy']).toBe(API_CSP);
    }
  });

  it('error: any other path under /docs is 404 in the envelope (no directory is served)', async () => {
    const paths = [
      '/docs/',
      '/DOCS',
      '/docs/index.html',
      '/docs/assets/redoc-0.0.0/redoc.standalone.js',
      `${REDOC_BUNDLE_PATH}.map`,
      '/docs/assets/../openapi.json/..',
      '/docs/%2e%2e/package.json',
    ];
    for (const path of paths) {
      const res = await request(gw.app).get(path);
      expect({ path, status: res.status, code: res.body?.error?.code }).toEqual({
        path,
        status: 404,
        code: 'NOT_FOUND',
      });
      expect(res.headers['x-request-id']).toBeDefined();
    }
  });
});
