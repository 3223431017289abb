/**
 * `GET /v2/fills` through the gateway (real Redis; the audit trail written as the signer writes
 * it, the ledger by the ledger's own store): an integrator reads its own signatures of a period
 * and the fate of each (executed, reverted with the router's error, unused, pending), never
 * another integrator's, whatever it sends; a page is bounded (signatures answered, trail entries
 * read) and `next` reads the rest; every bad query is the spec's envelope, never a 500. Every
 * answer is checked against the OpenAPI document (call()).
 */
import request from 'supertest';
import { AUDIT_ENTRY_FIELD, auditRecordJson, type AuditRecord } from '@pmm/core';
import type { Gateway } from '@pmm/gateway';
import type { FillsResponse } from '@pmm/protocol';
import { sampleAuditRecord, sampleLedgerRevert } from '@pmm/testkit';
import { FILLS_PAGE } from '../../src/fills/fills-route';
import { call, harness, type Harness } from '../support/harness';
import { ledgerWriter } from '../support/ledger-writer';

let h: Harness;
let gw: Gateway;
const keys: Record<string, string> = {};
/** The second of the test's first signature; the period is the hour from it. */
const T = Math.floor(Date.now() / 1000) - 600;
const period = `from=${T}&to=${T + 3_600}`;

let n = 0;
/** A signature of `integratorId` on 8453, signed at T + `second`, valid 60 s. */
const signed = (integratorId: string, second: number, over: Partial<AuditRecord> = {}): AuditRecord =>
  sampleAuditRecord(++n, {
    integratorId,
    keyId: `pmm_${integratorId}`,
    time: (T + second) * 1_000,
    timestamp: T + second,
    deadline: T + second + 60,
    amountOut: '1000',
    blockNumber: 100,
    ...over,
  });

async function record(...records: AuditRecord[]): Promise<void> {
  for (const r of records) await h.redis.xadd(h.keys.audit(r.chainId), '*', AUDIT_ENTRY_FIELD, auditRecordJson(r));
}

const get = (query: string, key = keys.acme!) => call(request(gw.app).get(`/v2/fills${query}`).set('X-API-KEY', key));

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  keys.acme = await h.apiKey({ id: 'acme' });
  keys.beta = await h.apiKey({ id: 'beta' });
  keys.only56 = await h.apiKey({ id: 'only56', chains: [56] });
});
afterAll(() => h.cleanup());

describe('GET /v2/fills', () => {
  const executed = signed('acme', 1, { clientRequestId: 'order-1' });
  const reverted = signed('acme', 2);
  const unused = signed('acme', 3);
  const open = signed('acme', 4, { deadline: T + 10_000 });
  const betas = [signed('beta', 5), signed('beta', 6)];

  beforeAll(async () => {
    await record(executed, reverted, betas[0]!, unused, betas[1]!, open);
    const ledger = ledgerWriter(h.redis, h.keys, 8453);
    const swap = (r: AuditRecord, block: number) => ({
      ...ledger.entry(block, T + block - 98, r.integratorId, '3'),
      requestId: r.requestId,
      keyId: r.keyId,
    });
    await ledger.commit(
      101,
      [swap(executed, 101), swap(betas[0]!, 101)],
      [
        sampleLedgerRevert(101, T + 3, {
          requestId: reverted.requestId,
          integratorId: 'acme',
          reason: 'InsufficientOutput',
        }),
        sampleLedgerRevert(101, T + 3, {
          requestId: betas[1]!.requestId,
          integratorId: 'beta',
          reason: 'WrongSender',
          callIndex: 1,
        }),
      ],
    );
    // The ledger's time past every deadline but the open one's.
    await ledger.commit(300, [{ ...ledger.entry(300, T + 200, '', '1') }]);
  });

  it("behavior: the key's integrator's own signatures of the period, each with its fate; never another's", async () => {
    const res = await get(`?chainId=8453&${period}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.body as FillsResponse;
    expect(body).toMatchObject({
      chainId: 8453,
      from: T,
      to: T + 3_600,
      ledger: { blockNumber: 300, blockTime: T + 200 },
      next: null,
    });
    expect(body.fates.map((f) => [f.requestId, f.fate, f.reason])).toEqual([
      [executed.requestId, 'executed', undefined],
      [reverted.requestId, 'reverted', 'InsufficientOutput'],
      [unused.requestId, 'unused', undefined],
      [open.requestId, 'pending', undefined],
    ]);
    expect(body.fates[0]).toMatchObject({
      clientRequestId: 'order-1',
      keyId: 'pmm_acme',
      signature: executed.signature,
      firm: true,
      pair: 'WETH/USDC',
      executions: 1,
      blockNumber: 101,
      delaySeconds: 2,
      delayBlocks: 1,
    });
    expect(JSON.stringify(body)).not.toContain('integratorId');
    // Beta reads its own and nothing of acme's.
    const beta = (await get(`?${period}`, keys.beta)).body as FillsResponse;
    expect(beta.fates.map((f) => [f.requestId, f.fate, f.reason])).toEqual([
      [betas[0]!.requestId, 'executed', undefined],
      [betas[1]!.requestId, 'reverted', 'WrongSender'],
    ]);
  });

  it("error: no parameter names the integrator (it is the key's): one that tries is 400 UNSUPPORTED_FIELD", async () => {
    for (const name of ['integrator', 'integratorId', 'keyId']) {
      const res = await get(`?${period}&${name}=beta`);
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([
        400,
        'UNSUPPORTED_FIELD',
        `${name}: unsupported query parameter (defined: chainId, from, to, cursor)`,
      ]);
    }
  });

  it('behavior: a period of another chain, or with none of its signatures, is an empty page', async () => {
    const other = (await get(`?chainId=56&${period}`)).body as FillsResponse;
    expect(other).toEqual({ chainId: 56, from: T, to: T + 3_600, ledger: null, fates: [], next: null });
    const before = (await get(`?from=${T - 7_200}&to=${T - 3_600}`)).body as FillsResponse;
    expect(before.fates).toEqual([]);
  });

  it.each([
    ['', 422, 'VALIDATION_ERROR', 'from: is required'],
    [`?from=${T}`, 422, 'VALIDATION_ERROR', 'to: is required'],
    [`?from=${T}&to=${T}`, 422, 'VALIDATION_ERROR', 'to: must be after from'],
    [`?from=${T}&to=${T + 86_401}`, 422, 'VALIDATION_ERROR', 'to: must be at most 86400 s (a day) after from'],
    [`?from=yesterday&to=${T}`, 422, 'VALIDATION_ERROR', 'from: must be Unix seconds (ASCII digits only, at most 12)'],
    [`?${period}&from=${T}`, 422, 'VALIDATION_ERROR', 'from: must be given at most once'],
    [
      `?${period}&cursor=x`,
      422,
      'VALIDATION_ERROR',
      'cursor: must be the `next` of an earlier page (`<digits>-<digits>`)',
    ],
    [
      `?chainId=abc&${period}`,
      422,
      'VALIDATION_ERROR',
      'chainId: must be a base-10 unsigned integer (ASCII digits only)',
    ],
    [`?chainId=1&${period}`, 400, 'UNSUPPORTED_CHAIN', 'chainId: 1 is not served (served: 8453, 56, 4663)'],
    [
      `?chainid=56&${period}`,
      400,
      'UNSUPPORTED_FIELD',
      'chainid: unsupported query parameter (defined: chainId, from, to, cursor)',
    ],
  ])('error: %s is %i %s', async (query, status, code, message) => {
    const res = await get(query);
    expect(res.body).toEqual({ error: { code, message, requestId: res.headers['x-request-id'] } });
    expect(res.status).toBe(status);
  });

  it('error: a chain not enabled for the key is 400 UNSUPPORTED_CHAIN; without a key 401', async () => {
    const res = await get(`?chainId=8453&${period}`, keys.only56);
    expect([res.status, res.body.error.message]).toEqual([400, 'chainId: 8453 is not enabled for this API key']);
    expect((await get(`?chainId=56&${period}`, keys.only56)).status).toBe(200);
    const anonymous = await call(request(gw.app).get(`/v2/fills?${period}`));
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
  });
});

describe('GET /v2/fills, paged', () => {
  it(`behavior: at most ${FILLS_PAGE.maxFates} signatures a page; next reads the rest, each once, in order`, async () => {
    const chainId = 4663;
    const many = Array.from({ length: FILLS_PAGE.maxFates + 3 }, (_, i) =>
      signed('acme', 1_000 + Math.floor(i / 100), { chainId }),
    );
    const write = h.redis.pipeline();
    for (const r of many) write.xadd(h.keys.audit(chainId), '*', AUDIT_ENTRY_FIELD, auditRecordJson(r));
    await write.exec();
    const first = (await get(`?chainId=${chainId}&${period}`)).body as FillsResponse;
    expect(first.fates).toHaveLength(FILLS_PAGE.maxFates);
    expect(first.next).toMatch(/^[0-9]+-[0-9]+$/);
    const second = (await get(`?chainId=${chainId}&${period}&cursor=${first.next}`)).body as FillsResponse;
    expect(second.next).toBeNull();
    expect([...first.fates, ...second.fates].map((f) => f.requestId)).toEqual(many.map((r) => r.requestId));
  });

  it(`behavior: at most ${FILLS_PAGE.maxScan} entries of the trail read a page, another integrator's too: an empty page with a next`, async () => {
    const chainId = 56;
    const write = h.redis.pipeline();
    for (let i = 0; i < FILLS_PAGE.maxScan; i++)
      write.xadd(h.keys.audit(chainId), '*', AUDIT_ENTRY_FIELD, auditRecordJson(signed('beta', 2_000, { chainId })));
    const mine = signed('acme', 2_001, { chainId });
    write.xadd(h.keys.audit(chainId), '*', AUDIT_ENTRY_FIELD, auditRecordJson(mine));
    await write.exec();
    const first = (await get(`?chainId=${chainId}&${period}`)).body as FillsResponse;
    expect([first.fates, typeof first.next]).toEqual([[], 'string']);
    const second = (await get(`?chainId=${chainId}&${period}&cursor=${first.next}`)).body as FillsResponse;
    expect([second.fates.map((f) => f.requestId), second.next]).toEqual([[mine.requestId], null]);
  });
});
