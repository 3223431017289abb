/**
 * parseJsonBody alone: the 400 INVALID_JSON answers for bodies the sign path must not read,
 * above all a key written twice (JSON.parse alone would keep the last value and sign it).
 */
import fc from 'fast-check';
import { ApiError } from '@pmm/protocol';
import { parseJsonBody } from '../../src/http/json-body';

function invalidJson(text: string): string {
  try {
    parseJsonBody(Buffer.from(text));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INVALID_JSON' && err.status === 400) return err.message;
    throw err;
  }
  throw new Error(`accepted: ${text}`);
}

describe('parseJsonBody', () => {
  it.each([
    ['{"fee":"30","fee":"10"}', 'body: duplicate key "fee"'],
    ['{"fee":"30","f\\u0065e":"10"}', 'body: duplicate key "fee"'],
    ['{"a":{"b":1,"b":2}}', 'body: duplicate key "b"'],
    ['[{"a":1},{"c":"x:y","c":2}]', 'body: duplicate key "c"'],
    [`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`, `body: duplicate key "${'k'.repeat(64)}…"`],
    ['', 'body: empty; a JSON object is required'],
    [' \n', 'body: empty; a JSON object is required'],
    ['{"fee":', 'body: malformed JSON'],
    ['{"a":1,"a":2', 'body: malformed JSON'],
  ])('error: %j is 400 INVALID_JSON %j', (text, message) => {
    expect(invalidJson(text)).toBe(message);
  });

  it.each(['{"a":1,"b":{"a":2}}', '{"note":"a:b:c","x":[":"]}', '[]', '1'])(
    'behavior: %j is returned as JSON.parse reads it',
    (text) => {
      expect(parseJsonBody(Buffer.from(text))).toEqual(JSON.parse(text));
    },
  );

  it('property: any object with one of its keys written again is refused (seed 7)', () => {
    const object = fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1, maxKeys: 6 });
    fc.assert(
      fc.property(object, fc.nat(), fc.jsonValue(), (obj, pick, again) => {
        const keys = Object.keys(obj);
        const key = keys[pick % keys.length]!;
        const text = `${JSON.stringify(obj).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(again)}}`;
        expect(invalidJson(text)).toMatch(/^body: duplicate key /);
      }),
      { seed: 7, numRuns: 500 },
    );
  });
});
