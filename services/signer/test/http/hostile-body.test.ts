/**
 * Sign request bodies a hostile or broken client sends (issue 10, findings 1 and 5): bodies
 * that do not decode with their Content-Encoding, truncated compressed bodies, and JSON with
 * a duplicated key, over HTTP against the signer app with real Redis.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { INTERNAL_TOKEN, USER, startFixture, testRegistry, type Fixture } from '../support/fixture';

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
});
afterAll(async () => {
  await f.close();
});

const reg = testRegistry(8453);
const VALID = {
  tokenIn: reg.baseTokens[0]!.address,
  tokenOut: reg.quoteToken.address,
  fee: '30',
  userAddress: USER,
};

function post(body: Buffer | string, headers: Record<string, string> = {}, path = '/v2/swap/sign') {
  let r = request(f.app)
    .post(path)
    .set('X-Internal-Token', INTERNAL_TOKEN)
    .set('X-Integrator-Id', 'acme')
    // superagent would re-serialise a Buffer sent as JSON; the signer parses any Content-Type.
    .set('Content-Type', Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json');
  for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
  return r.send(body);
}

async function expectInvalidJson(res: request.Response, message: string | RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'INVALID_JSON' });
  expect(res.body.error.message).toMatch(message);
  expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
}

describe('compressed bodies (finding 1)', () => {
  const json = Buffer.from(JSON.stringify(VALID));

  it.each([
    ['gzip', Buffer.from('definitely not gzip')],
    ['deflate', Buffer.from('definitely not deflate')],
    ['br', Buffer.from([0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa])],
    ['gzip', gzipSync(json).subarray(0, 20)],
    ['deflate', deflateSync(json).subarray(0, 10)],
  ])(
    'error: Content-Encoding %s that does not decode (or is truncated) is 400 INVALID_JSON, not 500',
    async (enc, body) => {
      await expectInvalidJson(await post(body, { 'Content-Encoding': enc }), /does not decode/);
    },
  );

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('behavior: a valid %s body is signed', async (enc, compress) => {
    const res = await post(compress(json), { 'Content-Encoding': enc });
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    expect(res.body.verificationData).toMatch(/^0x/);
  });

  it('error: an unknown encoding is 400 INVALID_JSON', async () => {
    await expectInvalidJson(await post(json, { 'Content-Encoding': 'zstd-ish' }), /unsupported encoding/);
  });
});

describe('duplicated keys (finding 5)', () => {
  it.each(['/v2/swap/sign', '/v1/swap/sign'])(
    'error: %s with "fee" twice is 400 INVALID_JSON naming the key (never signed with the last value)',
    async (path) => {
      const text = `{"tokenIn":"${VALID.tokenIn}","tokenOut":"${VALID.tokenOut}","fee":"99999","fee":"10","userAddress":"${USER}"}`;
      await expectInvalidJson(await post(text, {}, path), 'body: duplicate key "fee"');
    },
  );

  it('error: the same key spelled with a unicode escape is a duplicate', async () => {
    const text = `{"tokenIn":"${VALID.tokenIn}","tokenOut":"${VALID.tokenOut}","fee":"30","f\\u0065e":"10","userAddress":"${USER}"}`;
    await expectInvalidJson(await post(text), 'body: duplicate key "fee"');
  });

  it('precedence: a duplicate key is INVALID_JSON before UNSUPPORTED_FIELD', async () => {
    await expectInvalidJson(await post('{"zz":1,"zz":2}'), 'body: duplicate key "zz"');
  });

  it('behavior: equal keys in different objects are not duplicates (then the nested value is 422)', async () => {
    const res = await post(JSON.stringify({ ...VALID, fee: { a: 1 }, minAmountOut: { a: 2 } }));
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 422, code: 'VALIDATION_ERROR' });
  });
});
