import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import { createDigestSigner } from '@pmm/core';
import { addressArb, RUNS, testKey, uint256Arb } from '@pmm/testkit';
import { ApiError } from '../../src/errors/api-error';
import { ERROR_CODES } from '../../src/errors/error-codes';
import { toErrorEnvelope, type ErrorEnvelope } from '../../src/errors/error-envelope';
import { levelsFromSamples } from '../../src/orderbook/orderbook-levels';
import type { OrderbookLevel, OrderbookResponse, PairOrderbook } from '../../src/orderbook/orderbook';
import { signSwapQuote } from '../../src/signing/sign-swap-quote';
import type { LegacySignSwapResponse, SignSwapResponse } from '../../src/wire/sign-wire';
import { FILL_FATE_SCHEMA, FILLS_RESPONSE_SCHEMA, type FillFate, type FillsResponse } from '../../src/wire/fills-wire';
import {
  errorEnvelopeSchema,
  ORDERBOOK_LEVEL_SCHEMA,
  ORDERBOOK_RESPONSE_SCHEMA,
  PAIR_ORDERBOOK_SCHEMA,
  SIGN_RESPONSE_SCHEMA,
  V1_ORDERBOOK_RESPONSE_SCHEMA,
  V1_SIGN_REQUEST_SCHEMA,
  V1_SIGN_RESPONSE_SCHEMA,
} from '../../src/wire/wire-schemas';
import { SIGN_REQUEST_SCHEMA } from '../../src/requests/sign-request';

// Compile-time: each schema names exactly the fields of its TypeScript type, and requires
// exactly the fields the type does not mark optional (tsconfig.test.json type-checks this file).
type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type Matches<S extends { properties: object; required: readonly string[] }, T> =
  Equal<keyof S['properties'], keyof T> extends true ? Equal<S['required'][number], RequiredKeys<T>> : false;
const _shapes: [
  Matches<typeof ORDERBOOK_LEVEL_SCHEMA, OrderbookLevel>,
  Matches<typeof PAIR_ORDERBOOK_SCHEMA, PairOrderbook>,
  Matches<typeof ORDERBOOK_RESPONSE_SCHEMA, OrderbookResponse>,
  Matches<typeof V1_ORDERBOOK_RESPONSE_SCHEMA, Omit<OrderbookResponse, 'chainId'>>,
  Matches<typeof SIGN_RESPONSE_SCHEMA, SignSwapResponse>,
  Matches<typeof V1_SIGN_RESPONSE_SCHEMA, LegacySignSwapResponse>,
  Matches<typeof FILL_FATE_SCHEMA, FillFate>,
  Matches<typeof FILLS_RESPONSE_SCHEMA, FillsResponse>,
] = [true, true, true, true, true, true, true, true];

/** The schemas as the OpenAPI document holds them, so that their `$ref`s resolve. */
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
ajv.addSchema({
  $id: 'wire',
  components: {
    schemas: {
      OrderbookLevel: ORDERBOOK_LEVEL_SCHEMA,
      PairOrderbook: PAIR_ORDERBOOK_SCHEMA,
      OrderbookResponse: ORDERBOOK_RESPONSE_SCHEMA,
    },
  },
});
const compiled = new Map<object, ReturnType<typeof ajv.compile>>();
const validate = (schema: object, value: unknown): string | undefined => {
  const v = compiled.get(schema) ?? ajv.compile(schema);
  compiled.set(schema, v);
  return v(value) ? undefined : ajv.errorsText(v.errors);
};
const bookSchema = { $ref: 'wire#/components/schemas/OrderbookResponse' };

describe('wire schemas', () => {
  it('behavior: every level levelsFromSamples makes is a valid OrderbookLevel, in a valid book', () => {
    const sample = fc.record({
      amountIn: fc.bigInt({ min: 1n, max: 10n ** 40n }),
      amountOut: fc.bigInt({ min: 1n, max: 10n ** 40n }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom('bid' as const, 'ask' as const),
        fc.array(sample, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 24 }),
        (side, raw, baseDecimals, quoteDecimals) => {
          // Cumulative samples, as the indexer takes them along one ladder.
          let amountIn = 0n;
          let amountOut = 0n;
          const samples = raw.map((s) => ({
            amountIn: (amountIn += s.amountIn),
            amountOut: (amountOut += s.amountOut),
          }));
          const levels = levelsFromSamples(side, samples, baseDecimals, quoteDecimals);
          for (const level of levels) expect(validate(ORDERBOOK_LEVEL_SCHEMA, level)).toBeUndefined();
          const pair = {
            baseToken: '0x4200000000000000000000000000000000000006',
            quoteToken: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
            bids: side === 'bid' ? levels : [],
            asks: side === 'ask' ? levels : [],
          };
          const book: OrderbookResponse = { chainId: 8453, blockNumber: 1, blockTime: 1, pairs: [pair] };
          expect(validate(bookSchema, book)).toBeUndefined();
        },
      ),
      RUNS,
    );
  });

  it('error: a book the schema refuses (it can fail)', () => {
    const book = { chainId: 8453, blockNumber: 1, blockTime: 1, pairs: [] };
    expect(validate(bookSchema, book)).toBeUndefined();
    expect(validate(bookSchema, { ...book, chainId: 1 })).toBeDefined();
    expect(validate(bookSchema, { ...book, pairs: [{ baseToken: '0x00' }] })).toBeDefined();
    expect(validate(ORDERBOOK_LEVEL_SCHEMA, { price: '1e-5', amount: '1' })).toBeDefined();
  });

  it('behavior: what signSwapQuote makes fits SignQuoteResponse', () => {
    const signer = createDigestSigner(testKey('wire-schemas'));
    const fields = fc.record({
      tokenIn: addressArb,
      tokenOut: addressArb,
      // Room for the deadline (timestamp + validity) to stay a safe integer too.
      timestamp: fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER - 86_400) }),
      fee: uint256Arb,
      originRate: uint256Arb,
      userAddress: addressArb,
    });
    fc.assert(
      fc.property(fields, (f) => {
        const body: SignSwapResponse = {
          verificationData: signSwapQuote(signer, f).verificationData,
          timestamp: Number(f.timestamp),
          deadline: Number(f.timestamp) + 60,
        };
        expect(validate(SIGN_RESPONSE_SCHEMA, body)).toBeUndefined();
      }),
      { ...RUNS, numRuns: 100 },
    );
  });

  it('error: a sign response the schema refuses (it can fail)', () => {
    const body = { verificationData: '0xab', timestamp: 1, deadline: 61 };
    expect(validate(SIGN_RESPONSE_SCHEMA, body)).toBeUndefined();
    expect(validate(SIGN_RESPONSE_SCHEMA, { ...body, deadline: undefined })).toBeDefined();
    expect(validate(SIGN_RESPONSE_SCHEMA, { ...body, deadline: 1.5 })).toBeDefined();
    expect(validate(V1_SIGN_RESPONSE_SCHEMA, { verificationData: '0xab', timestamp: 1 })).toBeUndefined();
    expect(validate(V1_SIGN_RESPONSE_SCHEMA, body)).toBeDefined();
    expect(validate(SIGN_RESPONSE_SCHEMA, { ...body, verificationData: '0xAB' })).toBeDefined();
    expect(validate(SIGN_RESPONSE_SCHEMA, { ...body, timestamp: -1 })).toBeDefined();
    expect(validate(SIGN_RESPONSE_SCHEMA, { timestamp: 1 })).toBeDefined();
  });

  it('behavior: the envelope toErrorEnvelope renders fits the schema of its code, and no other', () => {
    for (const code of ERROR_CODES) {
      const { body } = toErrorEnvelope(new ApiError(code, 'x'), 'req-1');
      const envelope: ErrorEnvelope = body;
      expect({ code, error: validate(errorEnvelopeSchema([code]), envelope) }).toEqual({ code, error: undefined });
      expect(validate(errorEnvelopeSchema(), envelope)).toBeUndefined();
      const other = ERROR_CODES.find((c) => c !== code)!;
      expect(validate(errorEnvelopeSchema([other]), envelope)).toBeDefined();
    }
  });

  it('behavior: /v1 sign requests are the v2 ones without chainId and slippageBps', () => {
    expect(Object.keys(V1_SIGN_REQUEST_SCHEMA.properties)).toEqual(
      Object.keys(SIGN_REQUEST_SCHEMA.properties).filter((name) => name !== 'chainId' && name !== 'slippageBps'),
    );
    expect(V1_SIGN_REQUEST_SCHEMA.required).toEqual(SIGN_REQUEST_SCHEMA.required);
  });
});
