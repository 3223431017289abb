/**
 * Past capacity, a fast no, at the signer (docs/decisions/0071-past-capacity-a-fast-no.md): the
 * bound on signs in flight and on a chain's firm quotes, and the sign's deadline (what the
 * gateway sends in X-Sign-Budget-Ms) checked before the firm quote, before the signature and its
 * record, and once the record is written. The use case is driven with a hand-settled audit sink;
 * the route over HTTP with the fixture's app.
 */
import request from 'supertest';
import { SIGN_BUDGET_HEADER } from '@pmm/protocol';
import { createMetrics, Deadline, RefusalError, type AuditRecord } from '@pmm/core';
import {
  createSignUseCase,
  integratorView,
  signerAdmission,
  signMetrics,
  type AuditSink,
  type FirmQuotes,
  type SignCommand,
  type SignerAdmission,
} from '../../src';
import type { FirmQuoteRequest } from '../../src/chain/firm-quotes';
import {
  INTERNAL_TOKEN,
  NO_HALTS,
  NOW_MS,
  USER,
  fixedFirmQuotes,
  integrator,
  startFixture,
  testKey,
  testRegistry,
  type Fixture,
} from '../support/fixture';
import { createDigestSigner } from '@pmm/core';
import { NO_REFERENCES } from '../../src/domain/reference-check';

const registry = testRegistry(8453);
const metricsOf = () => createMetrics('deadline-test', { defaultMetrics: false });

/** An audit sink whose writes the test settles by hand. */
function heldAudit() {
  const writes: { record: AuditRecord; resolve(): void }[] = [];
  const sink: AuditSink = { record: (record) => new Promise<void>((resolve) => writes.push({ record, resolve })) };
  return { sink, writes };
}

function useCase(audit: AuditSink, admission: SignerAdmission, firmQuotes: FirmQuotes = fixedFirmQuotes) {
  return createSignUseCase({
    servedChains: [8453],
    maxFee: 10_000n,
    signers: new Map([[8453, createDigestSigner(testKey('api-signer-8453'))]]),
    originRates: new Map([[8453, 0n]]),
    quoteValiditySeconds: new Map([[8453, 60]]),
    pairs: { get: (chainId) => (chainId === 8453 ? registry : undefined) },
    audit,
    references: NO_REFERENCES,
    halts: NO_HALTS,
    firmQuotes,
    metrics: signMetrics(metricsOf()),
    admission,
    logSigned: false,
    now: () => NOW_MS,
  });
}

const admissionOf = (maxInFlight = 8) => signerAdmission({ maxInFlight, maxDeadlineMs: 400, metrics: metricsOf() });

const command = (deadline: Deadline | undefined, amountIn?: string): SignCommand => ({
  body: {
    chainId: 8453,
    tokenIn: registry.quoteToken.address,
    tokenOut: registry.baseTokens[0]!.address,
    fee: '30',
    userAddress: USER,
    ...(amountIn === undefined ? {} : { amountIn }),
  },
  integrator: integratorView('acme', JSON.stringify(integrator('acme'))),
  legacy: false,
  keyId: 'pmm_key1',
  requestId: 'req-1',
  ...(deadline ? { deadline } : {}),
  log: () => undefined,
});

/** The refusal a sign was rejected with. */
async function refusalOf(p: Promise<unknown>): Promise<RefusalError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RefusalError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the sign use case to its deadline', () => {
  it('error: with no time left, nothing is signed and nothing recorded: 503 (record)', async () => {
    const { sink, writes } = heldAudit();
    const err = await refusalOf(useCase(sink, admissionOf())(command(new Deadline(Date.now() - 1, 400))));
    expect([err.kind, err.reason, err.status, err.headers['Retry-After']]).toEqual(['deadline', 'record', 503, '1']);
    expect(err.message).toBe('this sign could not be answered within its deadline; retry shortly');
    expect(writes).toHaveLength(0);
  });

  it('behavior: the firm quote is asked to end before the deadline by what the record takes lately', async () => {
    const { sink, writes } = heldAudit();
    const admission = admissionOf();
    const asked: FirmQuoteRequest[] = [];
    const quotes: FirmQuotes = (req) => {
      asked.push(req);
      return fixedFirmQuotes(req);
    };
    const deadline = new Deadline(Date.now() + 300, 400);
    const recordMs = admission.recordTime.ms;
    const pending = useCase(sink, admission, quotes)(command(deadline, '1000000'));
    // The write is held 20 ms from when it starts (on a loaded machine the way to it can take
    // longer than that, and a write released as it starts would time at under the estimate).
    while (writes.length < 1) await sleep(2);
    await sleep(20);
    writes[0]!.resolve();
    await pending;
    expect(asked).toHaveLength(1);
    expect(asked[0]!.deadlineAt).toBe(deadline.at - recordMs);
    // The record's write was timed: the estimate moved towards it.
    expect(admission.recordTime.ms).toBeGreaterThan(recordMs);
  });

  it('error: with less left than the record takes, the firm quote is not asked: 503 (firm_quote)', async () => {
    const { sink, writes } = heldAudit();
    const admission = admissionOf();
    for (let i = 0; i < 100; i++) admission.recordTime.observe(50);
    let asked = 0;
    const quotes: FirmQuotes = (req) => {
      asked++;
      return fixedFirmQuotes(req);
    };
    const err = await refusalOf(
      useCase(sink, admission, quotes)(command(new Deadline(Date.now() + 30, 400), '1000000')),
    );
    expect([err.kind, err.reason]).toEqual(['deadline', 'firm_quote']);
    expect([asked, writes.length]).toEqual([0, 0]);
  });

  it('error: a firm quote that failed once its deadline had passed is a deadline refusal', async () => {
    const { sink } = heldAudit();
    const { ApiError } = await import('@pmm/protocol');
    const late: FirmQuotes = async (req) => {
      await sleep(Math.max(0, req.deadlineAt! - Date.now()) + 2);
      throw new ApiError('SERVICE_UNAVAILABLE', 'no firm amount for amountIn right now');
    };
    const err = await refusalOf(useCase(sink, admissionOf(), late)(command(new Deadline(Date.now() + 40, 400), '1')));
    expect([err.kind, err.reason]).toEqual(['deadline', 'firm_quote']);
  });

  it('error: a record written after the deadline withholds the answer; the record simply exists (late)', async () => {
    const { sink, writes } = heldAudit();
    const deadline = new Deadline(Date.now() + 40, 400);
    const pending = refusalOf(useCase(sink, admissionOf())(command(deadline)));
    while (writes.length < 1) await sleep(2);
    // Released only once the deadline has passed, however long the way to the write took.
    await sleep(Math.max(0, deadline.at - Date.now()) + 20);
    expect(writes).toHaveLength(1);
    writes[0]!.resolve();
    const err = await pending;
    expect([err.kind, err.reason]).toEqual(['deadline', 'late']);
    expect(writes[0]!.record.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it("error: past the bound on a chain's firm quotes, a sign with amountIn is refused at once (chain_node); others still sign", async () => {
    const { sink, writes } = heldAudit();
    // 4 signs in flight: at most 2 wait for one chain's firm quotes.
    const admission = admissionOf(4);
    const stalled: FirmQuotes = () => new Promise(() => undefined);
    const sign = useCase(sink, admission, stalled);
    void sign(command(undefined, '1'));
    void sign(command(undefined, '2'));
    await sleep(1);
    const err = await refusalOf(sign(command(undefined, '3')));
    expect([err.kind, err.reason, err.message]).toEqual([
      'overload',
      'chain_node',
      'over capacity right now; retry shortly',
    ]);
    const plain = sign(command(undefined));
    while (writes.length < 1) await sleep(2);
    writes[0]!.resolve();
    await expect(plain).resolves.toContain('verificationData');
  });

  it('behavior: without a deadline (a direct call) nothing is refused for time', async () => {
    const { sink, writes } = heldAudit();
    const pending = useCase(sink, admissionOf())(command(undefined, '1000000'));
    while (writes.length < 1) await sleep(2);
    await sleep(30);
    writes[0]!.resolve();
    await expect(pending).resolves.toContain('amountOut');
  });
});

describe('the budget a sign is given', () => {
  it('behavior: what the gateway sent, never more than MAX_SIGN_DEADLINE_MS; that when none or no whole ms was sent', () => {
    const admission = admissionOf();
    expect(
      ['250', '0', '400', '401', '120000', '9999999', '-5', '1.5', undefined, ['100']].map(admission.budgetOf),
    ).toEqual([250, 0, 400, 400, 400, 400, 400, 400, 400, 400]);
  });
});

/** The fixture signer's MAX_SIGN_DEADLINE_MS: long enough that only the tests that wait it out see it, on a loaded machine. */
const MAX_DEADLINE_MS = 1_500;

describe('the signer route: the bound on signs in flight and the budget it is sent', () => {
  let f: Fixture;
  let held: ReturnType<typeof heldAudit>;

  beforeAll(async () => {
    held = heldAudit();
    f = await startFixture({
      chains: [8453],
      override: (deps) => ({ ...deps, audit: held.sink, maxSignsInFlight: 2, maxSignDeadlineMs: MAX_DEADLINE_MS }),
    });
    await f.putIntegrator(integrator('acme'));
  });
  afterAll(async () => {
    await f.close();
  });

  const post = (headers: Record<string, string> = {}) => {
    let r = request(f.app)
      .post('/v2/swap/sign')
      .set('X-Internal-Token', INTERNAL_TOKEN)
      .set('X-Integrator-Id', 'acme')
      .set('Content-Type', 'application/json');
    for (const [name, value] of Object.entries(headers)) r = r.set(name, value);
    return r.send(
      JSON.stringify({
        chainId: 8453,
        tokenIn: registry.quoteToken.address,
        tokenOut: registry.baseTokens[0]!.address,
        fee: '30',
        userAddress: USER,
      }),
    );
  };
  const metric = async (name: string, reason: string) => {
    const text = await f.deps.metrics.registry.metrics();
    const m = new RegExp(`^${name}\\{reason="${reason}"[^}]*\\} (\\d+)$`, 'm').exec(text);
    return Number(m?.[1]);
  };

  it('error: past MAX_SIGNS_IN_FLIGHT a sign is 503 at once; the slots free as the signs end', async () => {
    const waiting = [post(), post()].map((r) => r.then((res) => res));
    while (held.writes.length < 2) await sleep(2);
    const started = Date.now();
    const refused = await post();
    expect(Date.now() - started).toBeLessThan(200);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'over capacity right now; retry shortly',
    });
    expect(await metric('signer_overload_refusals_total', 'in_flight')).toBe(1);
    for (const w of held.writes.splice(0)) w.resolve();
    for (const res of await Promise.all(waiting)) expect(res.status).toBe(200);
    const again = post().then((res) => res);
    while (held.writes.length < 1) await sleep(2);
    held.writes.splice(0)[0]!.resolve();
    expect((await again).status).toBe(200);
  });

  it('error: a sign that arrives with no budget left is refused before it is read (queue)', async () => {
    const res = await post({ [SIGN_BUDGET_HEADER]: '0' });
    expect(res.status).toBe(503);
    expect(res.body.error.message).toBe('this sign could not be answered within its deadline; retry shortly');
    expect(held.writes).toHaveLength(0);
    expect(await metric('signer_deadline_refusals_total', 'queue')).toBe(1);
  });

  /**
   * Resolves once the sign's write is held and MAX_SIGN_DEADLINE_MS (and a little) has passed
   * since: the signer started its deadline when the request came in, before the write, so the
   * deadline has surely passed. (Counted from before the request was sent, on a loaded machine the
   * request could reach the signer so late that its deadline had not yet passed: a 200.)
   */
  async function pastTheDeadlineOfTheHeldWrite(): Promise<void> {
    while (held.writes.length < 1) await sleep(2);
    await sleep(MAX_DEADLINE_MS + 50);
  }

  it("behavior: a budget that is not whole milliseconds counts as none: the signer's own deadline", async () => {
    const pending = post({ [SIGN_BUDGET_HEADER]: '-5' }).then((res) => res);
    while (held.writes.length < 1) await sleep(2);
    await sleep(20);
    held.writes.splice(0)[0]!.resolve();
    expect((await pending).status).toBe(200);
  });

  it('error: a budget past MAX_SIGN_DEADLINE_MS is cut to it: a record written after that is withheld (late), and exists', async () => {
    const late = await metric('signer_deadline_refusals_total', 'late');
    const pending = post({ [SIGN_BUDGET_HEADER]: '60000' }).then((res) => res);
    await pastTheDeadlineOfTheHeldWrite();
    const write = held.writes.splice(0)[0]!;
    write.resolve();
    const res = await pending;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.error.message).toBe('this sign could not be answered within its deadline; retry shortly');
    expect(write.record.signature).toMatch(/^0x[0-9a-f]{130}$/);
    expect(await metric('signer_deadline_refusals_total', 'late')).toBe(late + 1);
  });

  it("error: a request with no budget has the signer's own deadline", async () => {
    const late = await metric('signer_deadline_refusals_total', 'late');
    const pending = post().then((res) => res);
    await pastTheDeadlineOfTheHeldWrite();
    held.writes.splice(0)[0]!.resolve();
    expect((await pending).status).toBe(503);
    expect(await metric('signer_deadline_refusals_total', 'late')).toBe(late + 1);
  });
});
