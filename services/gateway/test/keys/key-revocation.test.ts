/**
 * A key revoked or disabled through the key store stops working at the next request, not
 * after the key cache's ttl: the store announces the change on `access-updated` and the
 * gateway's key cache drops the entry. The sign request of a revoked key never reaches the signer.
 */
import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { call, harness, type Harness } from '../support/harness';
import { fakeSigner, type FakeSigner } from '../support/fake-signer';

let h: Harness;
let signer: FakeSigner;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  signer = await fakeSigner();
  // The longest ttl allowed: without the announcement a revoked key would work for 1 s.
  gw = await h.gateway({ signerUrl: signer.url, keyCacheMs: 1_000 });
});
afterAll(async () => {
  await h.cleanup();
  await signer.close();
});

const sign = (key: string) =>
  call(request(gw.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send('{}'));

async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

describe('key revocation', () => {
  it.each(['revoke', 'disable key', 'disable integrator'] as const)(
    'behavior: %s takes effect at once (well under the cache ttl), and nothing reaches the signer',
    async (how) => {
      const key = await h.apiKey();
      expect((await sign(key)).status).toBe(200);
      const listing = (await h.store.list()).find((l) => key.startsWith(l.key.keyId))!;
      if (how === 'revoke') await h.store.revokeKey(listing.key.keyId);
      else if (how === 'disable key') await h.store.setKeyDisabled(listing.key.keyId, true);
      else await h.store.updateIntegrator(listing.key.integratorId, { disabled: true });
      expect(await within(300, async () => (await sign(key)).status === 401)).toBe(true);
      signer.requests.length = 0;
      expect((await sign(key)).status).toBe(401);
      expect(signer.requests).toHaveLength(0);
    },
  );
});
