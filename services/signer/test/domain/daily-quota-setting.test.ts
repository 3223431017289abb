/**
 * DAILY_SIGNATURE_QUOTA reaches the sign path: the real signer (startSigner from its loaded
 * config, real Redis) refuses the signature past the setting's quota with 429 QUOTA_EXCEEDED for
 * an integrator whose record sets none. The use case's own quota rules are tested in
 * sign-use-case.test.ts; this is the wiring from the setting to them (createApp once dropped it,
 * and the setting applied to nobody).
 */
import { testRegistry, INTERNAL_TOKEN, USER, REDIS_URL } from '../support/fixture';
import { startDrillSigner, type DrillSigner } from '../support/sign-drill';

const QUOTA = 2;
let signer: DrillSigner;

beforeAll(async () => {
  // The tests' Redis keeps nothing on disk: durable writes are the drills' subject.
  signer = await startDrillSigner(REDIS_URL, { DAILY_SIGNATURE_QUOTA: String(QUOTA), REDIS_DURABILITY: 'none' });
});

afterAll(async () => {
  await signer?.close();
});

async function sign(): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const registry = testRegistry(8453);
  const res = await fetch(signer.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'acme' },
    body: JSON.stringify({
      tokenIn: registry.baseTokens[0]!.address,
      tokenOut: registry.quoteToken.address,
      fee: '30',
      userAddress: USER,
    }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe('DAILY_SIGNATURE_QUOTA', () => {
  it('error: past the setting, an integrator whose record sets no quota gets 429 QUOTA_EXCEEDED', async () => {
    for (let i = 0; i < QUOTA; i++) expect((await sign()).status).toBe(200);
    const refused = await sign();
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('QUOTA_EXCEEDED');
    expect(refused.body.error?.message).toContain(`daily quota of ${QUOTA} signatures on chain 8453`);
  });
});
