/**
 * The SDK's getFills (@pmm/client) against the real gateway (createApp, real Redis): a period
 * given as Dates or Unix seconds, read page by page through `next` until the end, each of the
 * key's signatures once and only its own; a bad period is the API's PmmApiError, not retried.
 * Among the gateway's tests because it runs on the gateway's harness.
 */
import { PmmClient, type FillFate, type PmmApiError } from '@pmm/client';
import { AUDIT_ENTRY_FIELD, auditRecordJson } from '@pmm/core';
import { sampleAuditRecord } from '@pmm/testkit';
import { FILLS_PAGE } from '../../src/fills/fills-route';
import { harness, type Harness } from '../support/harness';

let h: Harness;
let client: PmmClient;
const T = Math.floor(Date.now() / 1000) - 600;
/** acme's signatures: more than a page. */
const mine = Array.from({ length: FILLS_PAGE.maxFates + 20 }, (_, i) =>
  sampleAuditRecord(i, { integratorId: 'acme', time: (T + 1) * 1_000 + i, timestamp: T + 1, deadline: T + 61 }),
);

beforeAll(async () => {
  h = await harness();
  const gw = await h.gateway();
  client = new PmmClient({ baseUrl: await h.listen(gw.app), apiKey: await h.apiKey({ id: 'acme' }) });
  await h.apiKey({ id: 'beta' });
  const write = h.redis.pipeline();
  for (const [i, r] of mine.entries()) {
    write.xadd(h.keys.audit(8453), '*', AUDIT_ENTRY_FIELD, auditRecordJson(r));
    // Another integrator's signature between each two of acme's.
    const other = sampleAuditRecord(10_000 + i, { integratorId: 'beta', time: (T + 1) * 1_000 + i });
    write.xadd(h.keys.audit(8453), '*', AUDIT_ENTRY_FIELD, auditRecordJson(other));
  }
  await write.exec();
});
afterAll(() => h.cleanup());

describe('PmmClient.getFills', () => {
  it("behavior: every page of the period through next, the key's own signatures each once", async () => {
    const read: FillFate[] = [];
    let pages = 0;
    for (let cursor: string | undefined; ;) {
      const page = await client.getFills({ from: new Date(T * 1_000), to: T + 3_600, cursor });
      pages++;
      expect(page).toMatchObject({ chainId: 8453, from: T, to: T + 3_600 });
      read.push(...page.fates);
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(pages).toBe(2);
    expect(read.map((f) => f.requestId)).toEqual(mine.map((r) => r.requestId));
    // The ledger of this chain has no block yet: no fate is final.
    expect(new Set(read.map((f) => f.fate))).toEqual(new Set(['pending']));
  });

  it("error: a period over a day is the API's 422, not retried", async () => {
    const err = await client.getFills({ chainId: 56, from: T, to: T + 86_401 }).then(
      () => undefined,
      (e: PmmApiError) => e,
    );
    expect(err).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    expect(err!.message).toContain('to: must be at most 86400 s');
  });
});
