/**
 * The indexer with its quoter key in a real SoftHSM2 token (generated there, never
 * extractable) against a real devnet and Redis: the router trusts only the token's key as a
 * quoter (the devnet's own quoter is revoked), and the book is the one predicted from the
 * reference curve, level for level, so every quote() of the block accepted the token's
 * signatures. A quoter key that cannot be opened stops the start with a clear error.
 */
import Redis from 'ioredis';
import { type Hex } from 'viem';
import { PmmRouterArtifact } from '@pmm/contracts';
import { ConfigError, openPkcs11Signer, parsePkcs11Uri, redisKeys } from '@pmm/core';
import { deployerWallet, seedPlan, type ChainStack } from '@pmm/devnet';
import { chainClients, startSoftHsm, startSystem, type SoftHsm, type System } from '@pmm/testkit';
import { startIndexer, type RunningIndexer } from '../src';
import { loadIndexerConfig } from '../src/config';
import { toRawAmounts } from '../src/domain/ladder';
import { indexerEnv } from './support/indexer-env';
import { predictPairBook } from './support/predict-book';
import { randomPrefix } from './support/redis';
import { waitForBook } from './support/stored-book';

jest.setTimeout(180_000);

const PIN = '16180339';
const LADDER = { WETH: { asks: ['1000', '30000', '100000'], bids: ['1', '10', '40'] } };

let sys: System;
let redis: Redis;
let hsm: SoftHsm;
let TOKEN: string;
let quoterAddress: string;
const prefix = randomPrefix();
const running: RunningIndexer[] = [];

async function setQuoter(c: ChainStack, quoter: string, allowed: boolean): Promise<void> {
  const cl = chainClients(c);
  const wallet = cl.wallet(deployerWallet().privateKey);
  const hash = await wallet.writeContract({
    address: c.contracts.router as Hex,
    abi: PmmRouterArtifact.abi,
    functionName: 'setQuoter',
    args: [quoter as Hex, allowed],
  });
  const receipt = await cl.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}

/** The devnet env, with the quoter key in the token instead of QUOTER_KEY. */
function tokenEnv(c: ChainStack, label: string): Record<string, string> {
  const env = indexerEnv(c, prefix, {
    REDIS_URL: sys.redisUrl,
    LADDER: JSON.stringify(LADDER),
    QUOTER_PKCS11: hsm.uri(TOKEN, label),
    QUOTER_PKCS11_PIN: PIN,
  });
  delete env.QUOTER_KEY;
  return env;
}

beforeAll(async () => {
  hsm = startSoftHsm();
  TOKEN = hsm.initToken('quoter', PIN);
  hsm.generateKey(TOKEN, PIN, 'quoter');
  hsm.generateKey(TOKEN, PIN, 'p256', { curve: 'prime256v1' });
  // The token's address, as the operator reads it before whitelisting the key on the router.
  const probe = await openPkcs11Signer({ key: parsePkcs11Uri(hsm.uri(TOKEN, 'quoter')), pin: PIN });
  quoterAddress = probe.address;
  await probe.close();
  // The chain and a private Redis; the indexer runs in this process.
  sys = await startSystem({ chains: [8453], blockIntervalMs: 400, services: [] });
  redis = new Redis(sys.redisUrl);
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  redis?.disconnect();
  await sys?.stop();
  hsm?.remove();
});

describe('indexer with the quoter key in a PKCS#11 token', () => {
  it('behavior: the book is the predicted one, every quote() signed by the token key the router trusts alone', async () => {
    const c = sys.chain(8453);
    await setQuoter(c, quoterAddress, true);
    await setQuoter(c, c.quoter.address, false);
    const config = loadIndexerConfig({ env: tokenEnv(c, 'quoter'), file: {} });
    expect(config.quoter.kind).toBe('pkcs11');
    const ix = await startIndexer(config, { defaultMetrics: false });
    running.push(ix);
    const book = await waitForBook(redis, redisKeys(prefix).book(8453), 0, 60_000);
    const plan = seedPlan(8453);
    const weth = c.baseTokens[0]!;
    const quote = c.quoteToken;
    const ladder = {
      asks: toRawAmounts(LADDER.WETH.asks, quote.decimals),
      bids: toRawAmounts(LADDER.WETH.bids, weth.decimals),
    };
    const reserves = { base: plan.baseTokens[0]!.routerReserve, quote: plan.quoteToken.routerReserve };
    const pair = book.pairs.find((p) => p.baseToken === weth.address)!;
    expect(pair.asks.length).toBeGreaterThan(0);
    expect(pair.bids.length).toBeGreaterThan(0);
    expect(pair).toEqual(predictPairBook(weth, quote, plan.baseTokens[0]!.curve, ladder, reserves));
  });

  it('error: a quoter key that is not secp256k1 stops the start with a ConfigError naming QUOTER_PKCS11, never the PIN', async () => {
    const c = sys.chain(8453);
    const config = loadIndexerConfig({ env: tokenEnv(c, 'p256'), file: {} });
    const err = await startIndexer(config, { defaultMetrics: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /^QUOTER_PKCS11 \(quoterPkcs11\): key \(label "p256"\).*not a secp256k1 key/,
    );
    expect((err as Error).message).not.toContain(PIN);
  });

  it('error: QUOTER_PKCS11 without its PIN, or beside QUOTER_KEY, is a configuration error', () => {
    const c = sys.chain(8453);
    const noPin = tokenEnv(c, 'quoter');
    delete noPin.QUOTER_PKCS11_PIN;
    expect(() => loadIndexerConfig({ env: noPin, file: {} })).toThrow(
      /QUOTER_PKCS11 \(quoterPkcs11\): the token's PIN is needed/,
    );
    expect(() =>
      loadIndexerConfig({ env: { ...tokenEnv(c, 'quoter'), QUOTER_KEY: c.quoter.privateKey }, file: {} }),
    ).toThrow(/QUOTER_KEY is set too/);
  });
});
