/**
 * The sign use case without HTTP (domain/sign-use-case.ts): the order of its steps, and its
 * invariant that no answer exists before the audit record is stored. The audit sink is a
 * hand-driven stand-in (this is pure logic); the signature is real and checked with viem.
 */
import { createDigestSigner, createMetrics, type AuditRecord, type HaltRecord } from '@pmm/core';
import { ApiError } from '@pmm/protocol';
import { recoverAddress, type Hex } from 'viem';
import {
  QuotaExceededError,
  createSignUseCase,
  integratorView,
  signMetrics,
  type AuditSink,
  type SignCommand,
  type SignUseCaseDeps,
} from '../../src';
import {
  FIRM_ANSWER_FIELDS,
  FIRM_BLOCK,
  NO_HALTS,
  NOW_MS,
  NOW_S,
  OTHER_USER,
  USER,
  fixedFirmQuotes,
  integrator,
  testKey,
  testRegistry,
} from '../support/fixture';
import { NO_REFERENCES } from '../../src/domain/reference-check';

/** An audit sink whose writes the test settles by hand. */
function heldAudit() {
  const writes: { record: AuditRecord; resolve(): void; reject(err: Error): void }[] = [];
  const sink: AuditSink = {
    record: (record) => new Promise<void>((resolve, reject) => writes.push({ record, resolve, reject })),
  };
  return { sink, writes };
}

function useCase(
  audit: AuditSink,
  metrics = createMetrics('use-case-test', { defaultMetrics: false }),
  over: Partial<SignUseCaseDeps> = {},
) {
  const signer = createDigestSigner(testKey('api-signer-8453'));
  return {
    signer,
    metrics,
    sign: createSignUseCase({
      servedChains: [8453],
      maxFee: 10_000n,
      signers: new Map([[8453, signer]]),
      originRates: new Map([[8453, 7n]]),
      quoteValiditySeconds: new Map([[8453, VALIDITY_SECONDS]]),
      pairs: { get: (chainId) => (chainId === 8453 ? testRegistry(8453) : undefined) },
      audit,
      references: NO_REFERENCES,
      halts: NO_HALTS,
      firmQuotes: fixedFirmQuotes,
      metrics: signMetrics(metrics),
      logSigned: false,
      now: () => NOW_MS,
      ...over,
    }),
  };
}

const registry = testRegistry(8453);
/** Not the default 60, so that a deadline computed from a constant instead of the setting fails. */
const VALIDITY_SECONDS = 45;
const body = (over: Record<string, unknown> = {}) => ({
  chainId: 8453,
  tokenIn: registry.quoteToken.address,
  tokenOut: registry.baseTokens[0]!.address,
  fee: '30',
  userAddress: USER,
  amountIn: '1000000',
  ...over,
});
const command = (over: Partial<SignCommand> = {}): SignCommand => ({
  body: body(),
  integrator: integratorView('acme', JSON.stringify(integrator('acme'))),
  legacy: false,
  keyId: 'pmm_key1',
  requestId: 'req-1',
  log: () => undefined,
  ...over,
});

/** The ApiError code a rejected sign carries. */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('sign use case', () => {
  it('behavior: answers only once its audit record is stored, with what was recorded', async () => {
    const { sink, writes } = heldAudit();
    const { sign, signer } = useCase(sink);
    let answered: string | undefined;
    const pending = sign(command()).then((json) => (answered = json));
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(answered).toBeUndefined();
    writes[0]!.resolve();
    await pending;
    const response = JSON.parse(answered!) as { verificationData: Hex; timestamp: number; calldata: string };
    expect(response.timestamp).toBe(NOW_S);
    const record = writes[0]!.record;
    expect(record).toMatchObject({
      chainId: 8453,
      integratorId: 'acme',
      keyId: 'pmm_key1',
      requestId: 'req-1',
      userAddress: USER.toLowerCase(),
      fee: '30',
      originRate: '7',
      amountIn: '1000000',
      timestamp: NOW_S,
      signer: signer.address,
    });
    // The recorded signature is the one in the answer, and it recovers to the chain's key.
    expect(response.verificationData.toLowerCase()).toContain(record.signature.slice(2).toLowerCase());
    expect(await recoverAddress({ hash: record.digest as Hex, signature: record.signature as Hex })).toBe(
      signer.address,
    );
  });

  it('behavior: the answer and the record carry the deadline, timestamp + the chain validity; /v1 answers keep the earlier fields', async () => {
    const { sink, writes } = heldAudit();
    const { sign } = useCase(sink);
    const pending = sign(command());
    await new Promise((r) => setImmediate(r));
    writes[0]!.resolve();
    const json = await pending;
    // The field sits right after the timestamp it is counted from.
    expect(Object.keys(JSON.parse(json) as object)).toEqual(FIRM_ANSWER_FIELDS);
    expect(JSON.parse(json)).toMatchObject({ timestamp: NOW_S, deadline: NOW_S + VALIDITY_SECONDS });
    expect(writes[0]!.record.deadline).toBe(NOW_S + VALIDITY_SECONDS);

    const { chainId: _chainId, ...v1 } = body();
    const legacy = sign(command({ body: v1, legacy: true }));
    await new Promise((r) => setImmediate(r));
    writes[1]!.resolve();
    expect(Object.keys(JSON.parse(await legacy) as object)).toEqual(['verificationData', 'timestamp', 'calldata']);
    // The router's deadline holds for a /v1 quote too: the record keeps it.
    expect(writes[1]!.record.deadline).toBe(NOW_S + VALIDITY_SECONDS);
  });

  it('behavior: with amountIn the answer and the record carry the firm amount net of the fee, its block and the encoded minimum', async () => {
    const { sink, writes } = heldAudit();
    const { sign } = useCase(sink);
    // fixedFirmQuotes: gross 2 × amountIn = 2,000,000; fee 30 → 2,000,000 × 99,970 / 100,000.
    const pending = sign(command({ body: body({ slippageBps: 50 }) }));
    await new Promise((r) => setImmediate(r));
    writes[0]!.resolve();
    const answer = JSON.parse(await pending) as Record<string, unknown>;
    expect(answer).toMatchObject({ amountOut: '1999400', minAmountOut: '1989403', blockNumber: FIRM_BLOCK });
    expect(writes[0]!.record).toMatchObject({
      amountIn: '1000000',
      amountOut: '1999400',
      minAmountOut: '1989403',
      blockNumber: FIRM_BLOCK,
    });
  });

  it('error: no firm amount is 503 before anything is signed or recorded; signs without amountIn go on', async () => {
    const { sink, writes } = heldAudit();
    const { sign } = useCase(sink, undefined, {
      firmQuotes: () => Promise.reject(new ApiError('SERVICE_UNAVAILABLE', 'chain 8453: no firm amount')),
    });
    expect(await codeOf(sign(command()))).toBe('SERVICE_UNAVAILABLE');
    expect(writes).toHaveLength(0);
    const { amountIn: _amountIn, ...noAmount } = body();
    const pending = sign(command({ body: noAmount }));
    await new Promise((r) => setImmediate(r));
    writes[0]!.resolve();
    expect(Object.keys(JSON.parse(await pending) as object)).toEqual(['verificationData', 'timestamp', 'deadline']);
  });

  it('behavior: a halt made while the firm quote waits for the node stops the signature; nothing is signed or recorded', async () => {
    const { sink, writes } = heldAudit();
    let active: HaltRecord[] = [];
    const { sign } = useCase(sink, undefined, {
      halts: { current: () => active },
      firmQuotes: async (q) => {
        active = [{ scope: { chainId: 8453 }, reason: 'r', by: 'op', at: 1 }];
        return fixedFirmQuotes(q);
      },
    });
    expect(await codeOf(sign(command()))).toBe('HALTED');
    expect(writes).toHaveLength(0);
  });

  it('behavior: /v1 with amountIn asks for no firm amount (its interface is unchanged)', async () => {
    const { sink, writes } = heldAudit();
    const { sign } = useCase(sink, undefined, { firmQuotes: () => Promise.reject(new Error('not asked on /v1')) });
    const { chainId: _chainId, ...v1 } = body();
    const pending = sign(command({ body: v1, legacy: true }));
    await new Promise((r) => setImmediate(r));
    writes[0]!.resolve();
    expect(Object.keys(JSON.parse(await pending) as object)).toEqual(['verificationData', 'timestamp', 'calldata']);
    expect(writes[0]!.record.amountOut).toBeUndefined();
  });

  it('error: a failed audit write withholds the answer (503) and counts the failure', async () => {
    const { sink, writes } = heldAudit();
    const { sign, metrics } = useCase(sink);
    const pending = codeOf(sign(command()));
    await new Promise((r) => setImmediate(r));
    writes[0]!.reject(new Error('READONLY You cannot write against a read only replica.'));
    expect(await pending).toBe('SERVICE_UNAVAILABLE');
    expect(await metrics.registry.metrics()).toMatch(/signer_audit_failures_total\{chain="8453"[^}]*\} 1/);
  });

  it('behavior: validation comes before authorization, and nothing refused is recorded', async () => {
    const { sink, writes } = heldAudit();
    const { sign } = useCase(sink);
    // An unserved chain AND a bad fee: the field error wins (docs/decisions/0001-error-precedence.md).
    expect(await codeOf(sign(command({ body: body({ chainId: 56, fee: '-1' }) })))).toBe('VALIDATION_ERROR');
    expect(await codeOf(sign(command({ body: body({ chainId: 56 }) })))).toBe('UNSUPPORTED_CHAIN');
    expect(await codeOf(sign(command({ body: body({ tokenOut: OTHER_USER }) })))).toBe('PAIR_NOT_FOUND');
    expect(await codeOf(sign(command({ body: body({ userAddress: OTHER_USER }) })))).toBe('ADDRESS_NOT_WHITELISTED');
    expect(await codeOf(sign(command({ body: body({ extra: 1 }) })))).toBe('UNSUPPORTED_FIELD');
    expect(writes).toHaveLength(0);
  });

  it('behavior: legacy /v1 maps an untracked pair to 422 and refuses a chainId field', async () => {
    const { sink } = heldAudit();
    const { sign } = useCase(sink);
    const { chainId: _chainId, ...v1 } = body({ tokenOut: OTHER_USER });
    expect(await codeOf(sign(command({ body: v1, legacy: true })))).toBe('VALIDATION_ERROR');
    expect(await codeOf(sign(command({ body: body(), legacy: true })))).toBe('UNSUPPORTED_FIELD');
  });
});

describe('daily signature quota', () => {
  it("error: a spent quota is 429 QUOTA_EXCEEDED with Retry-After until 00:00 UTC, counted; the record's quota is the integrator's, else the default", async () => {
    const quotas: (number | undefined)[] = [];
    const refusing: AuditSink = {
      record: (_record, quota) => {
        quotas.push(quota);
        return Promise.reject(new QuotaExceededError(quota ?? 0));
      },
    };
    const metrics = createMetrics('use-case-quota', { defaultMetrics: false });
    const signer = createDigestSigner(testKey('api-signer-8453'));
    const sign = createSignUseCase({
      servedChains: [8453],
      maxFee: 10_000n,
      signers: new Map([[8453, signer]]),
      originRates: new Map(),
      quoteValiditySeconds: new Map([[8453, VALIDITY_SECONDS]]),
      pairs: { get: () => registry },
      references: NO_REFERENCES,
      audit: refusing,
      halts: NO_HALTS,
      firmQuotes: fixedFirmQuotes,
      dailySignatureQuota: 500,
      metrics: signMetrics(metrics),
      logSigned: false,
      now: () => NOW_MS,
    });
    let refused: ApiError | undefined;
    await sign(command()).catch((err: ApiError) => (refused = err));
    expect(refused?.code).toBe('QUOTA_EXCEEDED');
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers['Retry-After'])).toBe(Math.ceil((86_400_000 - (NOW_MS % 86_400_000)) / 1000));
    const own = integratorView('acme', JSON.stringify(integrator('acme', { dailySignatureQuota: 7 })));
    await sign(command({ integrator: own })).catch(() => undefined);
    expect(quotas).toEqual([500, 7]);
    expect(await metrics.registry.metrics()).toMatch(/signer_quota_refusals_total\{chain="8453"[^}]*\} 2/);
  });
});
