/**
 * The firm-quote source of each served chain, from the config: the node (CHAINS' rpcUrl), the
 * router and verifier (CHAINS' contracts) and the quoter key (QUOTER_KEY_<id>, or QUOTER_PKCS11_<id>
 * in a module: core's quoter-key.ts, as the indexer takes its own). A chain that lacks one of
 * them has no firm quotes: its signs with amountIn answer 503, which the start-up log says once,
 * so that an operator does not learn it from integrators.
 */
import { createHttpTransport, openQuoterKey, type Logger, type Metrics } from '@pmm/core';
import type { SignerConfig } from '../config';
import type { FirmQuoteChain, FirmQuoteOutcome } from './firm-quotes';

/** Largest node answer read for a quote (one uint256 word, or an error with its revert data). */
const MAX_QUOTE_ANSWER_BYTES = 64 * 1024;

/**
 * Opens each served chain's quoter key and node connection. Rejects with a ConfigError when a
 * quoter key cannot be opened (the ones opened before are closed then).
 */
export async function firmQuoteChains(
  config: SignerConfig,
  logger: Logger,
  metrics: Metrics,
): Promise<Map<number, FirmQuoteChain>> {
  const dropped = metrics.counter(
    'signer_node_messages_dropped_total',
    "Answers of a chain's node the signer threw away (oversized, malformed)",
    ['reason'] as const,
  );
  const chains = new Map<number, FirmQuoteChain>();
  try {
    for (const chainId of config.servedChains) {
      const deployment = config.deployments[chainId];
      const source = config.chains[chainId]?.quoter;
      const missing = [
        ...(deployment?.rpcUrl ? [] : ['CHAINS rpcUrl']),
        ...(source ? [] : [`QUOTER_KEY_${chainId} or QUOTER_PKCS11_${chainId}`]),
      ];
      if (!deployment?.rpcUrl || !source) {
        logger.warn('no firm quotes on this chain: a sign with amountIn answers 503', { chainId, missing });
        continue;
      }
      // A module that fails mid-run fails the quotes' authorisations: 503 (quoter_failed) until it is back.
      const quoter = await openQuoterKey(source, {
        chainId,
        sessions: config.pkcs11Sessions,
        ...(config.signerBackend === 'auto' ? {} : { backend: config.signerBackend }),
        onFailure: (reason) =>
          logger.error('quoter key unavailable; signs with amountIn answer 503 until its module recovers', {
            chainId,
            reason,
          }),
        onPinRefused: (reason) =>
          logger.error(
            'the token refused the quoter key PIN: no further login is tried (the token would lock); write the new PIN to the PIN file, or restart',
            { chainId, reason },
          ),
        onRecovered: () => logger.info('quoter key available again', { chainId }),
      });
      const rpc = createHttpTransport(deployment.rpcUrl, {
        maxAnswerBytes: MAX_QUOTE_ANSWER_BYTES,
        onDropped: (reason) => dropped.inc({ reason }),
      });
      // The first request opens the connection (and on a busy machine takes hundreds of ms): done
      // now, not inside the first sign's deadline. A node that is down is
      // only logged: signs with amountIn answer 503 until it is back.
      rpc.request('eth_chainId', [], 5_000).catch((err: unknown) =>
        logger.warn('firm quotes: the node does not answer yet', {
          chainId,
          error: err instanceof Error ? err.message : String(err),
        }),
      );
      chains.set(chainId, {
        rpc,
        router: deployment.contracts.router,
        verifier: deployment.contracts.verifier,
        quoter,
        multicall3: deployment.contracts.multicall3,
      });
      logger.info('firm quotes on', {
        chainId,
        quoter: quoter.address,
        quoterBackend: quoter.backend,
        // A block's quotes that arrive together: one aggregate3 eth_call, else one JSON-RPC batch.
        multicall3: deployment.contracts.multicall3 ?? null,
      });
    }
  } catch (err) {
    await closeFirmQuoteChains(chains);
    throw err;
  }
  return chains;
}

/** Closes the node connections and releases the quoter keys' module sessions. */
export async function closeFirmQuoteChains(chains: ReadonlyMap<number, FirmQuoteChain>): Promise<void> {
  for (const chain of chains.values()) chain.rpc.close();
  await Promise.allSettled([...chains.values()].map((chain) => chain.quoter.close?.()));
}

/** The firm-quote outcome counter, every served chain's `quoted` and `timeout` present from 0. */
export function firmQuoteMetric(
  metrics: Metrics,
  chains: readonly number[],
): (chainId: number, outcome: FirmQuoteOutcome) => void {
  const counter = metrics.counter(
    'signer_firm_quotes_total',
    'Firm quotes of signs with amountIn, by chain and outcome (quoted; unfillable: 422; any other: 503)',
    ['chain', 'outcome'] as const,
  );
  for (const chain of chains)
    for (const outcome of ['quoted', 'timeout'] as const) counter.inc({ chain: String(chain), outcome }, 0);
  return (chainId, outcome) => counter.inc({ chain: String(chainId), outcome });
}

/**
 * The node calls of the firm quotes (docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md):
 * `eth_call`s sent, and the quotes each round trip carried. Node calls per firm quote is
 * `signer_firm_quote_node_calls_total` over `signer_firm_quotes_total`; every served chain's
 * counter is present from 0.
 */
export function firmQuoteRoundTripMetric(
  metrics: Metrics,
  chains: readonly number[],
): (chainId: number, quotes: number, ethCalls: number) => void {
  const calls = metrics.counter(
    'signer_firm_quote_node_calls_total',
    "eth_calls the firm quotes sent to the chain's node (one per round trip with Multicall3, whatever the quotes it carries)",
    ['chain'] as const,
  );
  const batch = metrics.histogram(
    'signer_firm_quote_batch_size',
    "Distinct firm quotes per round trip to the chain's node (the requests that shared one are not counted twice)",
    ['chain'] as const,
    [1, 2, 4, 8, 16, 32, 64],
  );
  for (const chain of chains) calls.inc({ chain: String(chain) }, 0);
  return (chainId, quotes, ethCalls) => {
    calls.inc({ chain: String(chainId) }, ethCalls);
    batch.observe({ chain: String(chainId) }, quotes);
  };
}
