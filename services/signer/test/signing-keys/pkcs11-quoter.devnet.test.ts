/**
 * The signer with its firm-quote quoter key in a real SoftHSM2 token (generated there, never
 * extractable), against a real devnet and Redis: the router trusts only the token's key as a
 * quoter (the devnet's own quoter is revoked), and a sign with `amountIn` through the signer
 * started from its config (QUOTER_PKCS11_8453, the PIN in QUOTER_PKCS11_PIN_8453_FILE) answers the
 * reference curve's exact amount on both sides, so every quote() call carried the token's
 * authorisation. The revoked in-memory key gets 503 instead (the revocation is real). A quoter key
 * that cannot be opened stops the start with a clear error; the settings are checked as the
 * indexer's are (core's quoter-key.ts, one definition).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Hex } from 'viem';
import { PmmRouterArtifact, swapOut, type RouterCurve } from '@pmm/contracts';
import {
  ConfigError,
  createLogger,
  createRedis,
  openPkcs11Signer,
  parsePkcs11Uri,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { deployerWallet, type ChainStack } from '@pmm/devnet';
import {
  chainClients,
  devnetRegistry,
  publishBookHead,
  startSoftHsm,
  startSystem,
  type SoftHsm,
  type System,
} from '@pmm/testkit';
import { loadSignerConfig, startSigner, type RunningSigner } from '../../src';
import { INTERNAL_TOKEN, integrator } from '../support/fixture';

jest.setTimeout(180_000);

const PIN = '14142135';
const CHAIN = 8453;
const FEE = 30n;
const routerAbi = PmmRouterArtifact.abi;

let sys: System;
let c: ChainStack;
let hsm: SoftHsm;
let token: string;
/** The rebuildable server (pairs, book) and the records' one (the integrator), as their administrator. */
let redis: RedisClient;
let records: RedisClient;
let secrets: string;
let head: { number: number; hash: string; timestamp: number };
const prefix = `pmm-quoter-${Date.now().toString(36)}`;
const running: RunningSigner[] = [];

async function setQuoter(quoter: string, allowed: boolean): Promise<void> {
  const cl = chainClients(c);
  const hash = await cl.wallet(deployerWallet().privateKey).writeContract({
    address: c.contracts.router as Hex,
    abi: routerAbi,
    functionName: 'setQuoter',
    args: [quoter as Hex, allowed],
  });
  expect((await cl.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
}

/** The signer's settings for chain 8453, the quoter key as `quoter` gives it. */
function signerEnv(quoter: Record<string, string>): Record<string, string> {
  return {
    PORT: '0',
    REDIS_URL: sys.redisUrl,
    REDIS_RECORDS_URL: sys.redisRecordsUrl,
    REDIS_KEY_PREFIX: prefix,
    // The tests' Redis keeps nothing on disk: durable writes are the drills' subject.
    REDIS_DURABILITY: 'none',
    INTERNAL_TOKEN,
    SERVED_CHAINS: String(CHAIN),
    SIGNER_KEY_8453: c.apiSigner.privateKey,
    CHAINS: JSON.stringify({ [CHAIN]: { chainId: CHAIN, rpcUrl: c.rpcUrl, contracts: c.contracts } }),
    // Generous on a loaded machine: the deadline is firm-quotes.test.ts's subject.
    FIRM_QUOTE_DEADLINE_MS: '3000',
    MAX_SIGN_DEADLINE_MS: '3000',
    ...quoter,
  };
}

/** The token's key as the operator configures it: the URI, and the PIN in a secret file. */
function tokenQuoter(label: string): Record<string, string> {
  return { QUOTER_PKCS11_8453: hsm.uri(token, label), QUOTER_PKCS11_PIN_8453_FILE: path.join(secrets, 'pin') };
}

async function start(env: Record<string, string>): Promise<RunningSigner> {
  const signer = await startSigner(
    loadSignerConfig({ env, file: {} }),
    createLogger({ service: 'pkcs11-quoter-test', silent: true }),
  );
  running.push(signer);
  return signer;
}

async function sign(
  signer: RunningSigner,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${signer.served.port}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'acme' },
    body: JSON.stringify({
      chainId: CHAIN,
      tokenIn,
      tokenOut,
      fee: String(FEE),
      userAddress: c.testUser.address,
      amountIn: amountIn.toString(),
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  hsm = startSoftHsm();
  token = hsm.initToken('quoter', PIN);
  hsm.generateKey(token, PIN, 'quoter-8453');
  hsm.generateKey(token, PIN, 'p256', { curve: 'prime256v1' });
  secrets = mkdtempSync(path.join(tmpdir(), 'pkcs11-quoter-'));
  writeFileSync(path.join(secrets, 'pin'), `${PIN}\n`, { mode: 0o600 });
  // The token's address, as the operator reads it before whitelisting the key on the router.
  const probe = await openPkcs11Signer({ key: parsePkcs11Uri(hsm.uri(token, 'quoter-8453')), pin: PIN });
  const tokenAddress = probe.address;
  await probe.close();
  // The chain and a private Redis; the signer runs in this process.
  sys = await startSystem({ chains: [CHAIN], blockIntervalMs: 0, services: [] });
  c = sys.chain(CHAIN);
  await setQuoter(tokenAddress, true);
  await setQuoter(c.quoter.address, false);
  // What the gateway and the indexer would have written: the integrator, the pairs, the book's head.
  redis = createRedis(sys.redisUrl, { name: 'pkcs11-quoter-test' });
  records = createRedis(sys.redisRecordsUrl, { name: 'pkcs11-quoter-test-records' });
  await Promise.all([redisReady(redis), redisReady(records)]);
  const keys = redisKeys(prefix);
  await records.set(
    keys.integrator('acme'),
    JSON.stringify(integrator('acme', { whitelist: [c.testUser.address.toLowerCase()] })),
  );
  await redis.set(keys.pairs(CHAIN), JSON.stringify(devnetRegistry(c)));
  head = await publishBookHead(redis, keys, c);
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
  redis?.disconnect();
  records?.disconnect();
  await sys?.stop();
  hsm?.remove();
  if (secrets) rmSync(secrets, { recursive: true, force: true });
});

describe('the signer with its quoter key in a PKCS#11 token', () => {
  it('behavior: a sign with amountIn answers the exact amount on both sides, every quote() authorised by the token key alone', async () => {
    const config = loadSignerConfig({ env: signerEnv(tokenQuoter('quoter-8453')), file: {} });
    expect(config.chains[CHAIN]!.quoter?.kind).toBe('pkcs11');
    const signer = await start(signerEnv(tokenQuoter('quoter-8453')));
    const base = c.baseTokens[0]!.address;
    const quote = c.quoteToken.address;
    const curve = (await chainClients(c).publicClient.readContract({
      address: c.contracts.router as Hex,
      abi: routerAbi,
      functionName: 'getCurve',
      args: [base as Hex],
    })) as RouterCurve;
    const sides = [
      { side: 'ask' as const, tokenIn: quote, tokenOut: base, amountIn: 2_500n * 10n ** BigInt(c.quoteToken.decimals) },
      { side: 'bid' as const, tokenIn: base, tokenOut: quote, amountIn: 3n * 10n ** 18n },
    ];
    for (const s of sides) {
      const res = await sign(signer, s.tokenIn, s.tokenOut, s.amountIn);
      expect(res.status).toBe(200);
      expect(res.body.amountOut).toBe(swapOut(curve, s.side, s.amountIn, FEE).toString());
      expect(res.body.blockNumber).toBe(head.number);
    }
  });

  it('error: the in-memory key the router no longer trusts gets 503, never an amount (the revocation above is real)', async () => {
    const signer = await start(signerEnv({ QUOTER_KEY_8453: c.quoter.privateKey }));
    const res = await sign(signer, c.quoteToken.address, c.baseTokens[0]!.address, 10n ** 6n);
    expect(res.status).toBe(503);
    expect((res.body.error as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
  });

  it('error: a quoter key that is not secp256k1 stops the start with a ConfigError naming QUOTER_PKCS11_8453, never the PIN', async () => {
    const err = await start(signerEnv(tokenQuoter('p256'))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /^QUOTER_PKCS11_8453 \(quoterPkcs11_8453\): key \(label "p256"\).*not a secp256k1 key/,
    );
    expect((err as Error).message).not.toContain(PIN);
  });

  it('error: QUOTER_PKCS11_8453 without its PIN, or beside QUOTER_KEY_8453, is a configuration error', () => {
    const noPin = signerEnv({ QUOTER_PKCS11_8453: hsm.uri(token, 'quoter-8453') });
    expect(() => loadSignerConfig({ env: noPin, file: {} })).toThrow(
      /QUOTER_PKCS11_8453 \(quoterPkcs11_8453\): the token's PIN is needed: set QUOTER_PKCS11_PIN_8453_FILE/,
    );
    const both = signerEnv({ ...tokenQuoter('quoter-8453'), QUOTER_KEY_8453: c.quoter.privateKey });
    expect(() => loadSignerConfig({ env: both, file: {} })).toThrow(
      /QUOTER_PKCS11_8453 \(quoterPkcs11_8453\): QUOTER_KEY_8453 is set too; give one quoter key/,
    );
  });
});
