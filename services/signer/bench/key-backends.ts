/**
 * The signing key in memory beside the same kind of key in a PKCS#11 token (SoftHSM2), measured
 * in one run (part of `npm run bench signer`):
 * - signatures per second of the backend alone: in memory one after another (it is
 *   synchronous), the token with 16 signs in flight over its pooled sessions, and with one session;
 * - p50 / p99 latency of one signature at a paced rate (a sign started every 1/rate s, whatever
 *   the previous ones do), so the figures are latencies, not queueing behind a closed loop.
 */
import { createSoftHsmRunFolder, removeSoftHsmRunFolder, SOFTHSM_MODULE, startSoftHsm } from '@pmm/testkit';
import { openPkcs11Signer, parsePkcs11Uri, type Pkcs11Signer } from '@pmm/core';
import type { KeySigner } from '@pmm/protocol';
import { randomBytes } from 'node:crypto';

const PIN = '20262026';

export interface TokenKey {
  signer: Pkcs11Signer;
  /** The same key with a single session: what the pool is measured against. */
  single: Pkcs11Signer;
  close(): Promise<void>;
}

/** A token in a private SoftHSM folder with a generated key, or undefined when SoftHSM2 is not installed. */
export async function openTokenKey(sessions: number): Promise<TokenKey | undefined> {
  if (!SOFTHSM_MODULE) return undefined;
  createSoftHsmRunFolder();
  const hsm = startSoftHsm();
  const token = hsm.initToken('bench', PIN);
  hsm.generateKey(token, PIN, 'signer');
  const key = parsePkcs11Uri(hsm.uri(token, 'signer'));
  const signer = await openPkcs11Signer({ key, pin: PIN, sessions });
  const single = await openPkcs11Signer({ key, pin: PIN, sessions: 1 });
  return {
    signer,
    single,
    async close() {
      await Promise.all([signer.close(), single.close()]);
      removeSoftHsmRunFolder();
    },
  };
}

const digests = Array.from({ length: 64 }, () => new Uint8Array(randomBytes(32)));

/** Signatures per second over `ms`, `inFlight` signs at a time. */
async function throughput(signer: KeySigner, inFlight: number, ms: number): Promise<number> {
  let n = 0;
  const end = Date.now() + ms;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) await signer.sign(digests[n++ & 63]!);
    }),
  );
  return n / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** p50 / p99 (ms) of one signature, a sign started every 1/rate s for `ms`. */
async function pacedLatency(
  signer: KeySigner,
  rate: number,
  ms: number,
): Promise<{ p50: number; p99: number; n: number }> {
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const interval = 1000 / rate;
  const start = performance.now();
  for (let i = 0; performance.now() - start < ms; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    pending.push(
      Promise.resolve(signer.sign(digests[i & 63]!)).then(() => {
        latencies.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { p50: at(0.5), p99: at(0.99), n: latencies.length };
}

export async function benchKeyBackends(memory: KeySigner, token: TokenKey, sessions: number): Promise<void> {
  const rate = 400;
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  const ms = (x: number) => x.toFixed(2);
  console.log(
    `\nkey backends (same run): in memory (${memory.backend}) beside a PKCS#11 token (SoftHSM2 ${SOFTHSM_MODULE})`,
  );
  // Warm-up of both.
  await throughput(memory, 1, 300);
  await throughput(token.signer, sessions * 4, 300);
  const mem = await throughput(memory, 1, 2_000);
  const pooled = await throughput(token.signer, 16, 2_000);
  const single = await throughput(token.single, 16, 2_000);
  console.log(
    `  signatures/s: in memory ${f(mem)}; token ${f(pooled)} (${sessions} pooled sessions, 16 in flight), ${f(single)} (1 session)`,
  );
  const memLat = await pacedLatency(memory, rate, 3_000);
  const tokLat = await pacedLatency(token.signer, rate, 3_000);
  console.log(
    `  one signature at a paced ${rate}/s (3 s): in memory p50 ${ms(memLat.p50)} ms, p99 ${ms(memLat.p99)} ms; ` +
      `token p50 ${ms(tokLat.p50)} ms, p99 ${ms(tokLat.p99)} ms (${tokLat.n} signs)`,
  );
}
