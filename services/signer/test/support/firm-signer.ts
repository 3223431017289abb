/**
 * A signer started from its config in this process, serving chain 8453 with firm quotes (its
 * node, contracts, API signing key and quoter key given), on the tests' Redis under `prefix`:
 * the settings every test of the sign path with `amountIn` against a node gives it.
 */
import { createLogger } from '@pmm/core';
import { loadSignerConfig, startSigner, type RunningSigner } from '../../src';
import { INTERNAL_TOKEN, REDIS_URL } from './fixture';

export function startFirmSigner(o: {
  prefix: string;
  rpcUrl: string;
  contracts: object;
  signerKey: string;
  quoterKey: string;
  deadlineMs: number;
}): Promise<RunningSigner> {
  const config = loadSignerConfig({
    env: {
      PORT: '0',
      REDIS_URL,
      REDIS_KEY_PREFIX: o.prefix,
      // The tests' Redis keeps nothing on disk: durable writes are the drills' subject.
      REDIS_DURABILITY: 'none',
      INTERNAL_TOKEN,
      SERVED_CHAINS: '8453',
      SIGNER_KEY_8453: o.signerKey,
      QUOTER_KEY_8453: o.quoterKey,
      CHAINS: JSON.stringify({ 8453: { chainId: 8453, rpcUrl: o.rpcUrl, contracts: o.contracts } }),
      FIRM_QUOTE_DEADLINE_MS: String(o.deadlineMs),
      // The sign's own deadline past the firm quote's: here the firm quote's decides.
      MAX_SIGN_DEADLINE_MS: String(o.deadlineMs + 1_000),
    },
    file: {},
  });
  return startSigner(config, createLogger({ service: `firm-signer-${o.prefix}`, silent: true }));
}
