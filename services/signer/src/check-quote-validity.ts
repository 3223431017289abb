/**
 * Every sign answer's `deadline` is `timestamp + QUOTE_VALIDITY_SECONDS_<id>`, which is only
 * true while that setting equals the router's own validity. So at start, for each served chain
 * whose `rpcUrl` the CHAINS setting gives, the signer asks the router (`validity()`, a public
 * constant of the reference router):
 * - the node's chain id is asked first: a node of another chain (a wrong URL in CHAINS) stops the
 *   start, since whatever its router says is not this chain's router speaking;
 * - a different value stops the start: a wrong deadline tells integrators a quote still holds
 *   when the router already refuses it (or the reverse), on every answer;
 * - a router that does not expose `validity()`, a chain without `rpcUrl`, or a node that does not
 *   answer within the timeout is logged, and the setting is used as it is: signing must not
 *   depend on a node being up when the signer starts.
 */
import { Interface, JsonRpcProvider } from 'ethers';
import { maskUrl, nodeFetchRequest, throwConfigErrors, type ChainDeployments, type Logger } from '@pmm/core';
import type { ChainSignerConfig } from './config';

const ROUTER = new Interface(['function validity() view returns (uint256)']);

/** What the router said about one chain's validity. */
type ValidityCheck =
  | { outcome: 'matches'; routerSeconds: number }
  | { outcome: 'differs'; routerSeconds: number }
  | { outcome: 'wrong-chain'; nodeChainId: number }
  | { outcome: 'not-exposed' | 'no-node' | 'unreachable'; reason: string };

/** Asks one router for its validity (never throws: every failure is an outcome). */
async function askRouterValidity(
  rpcUrl: string,
  chainId: number,
  router: string,
  configuredSeconds: number,
  timeoutMs: number,
): Promise<ValidityCheck> {
  // A redirect from the node is its failure (core node-http.ts): the check is then 'unreachable'.
  const provider = new JsonRpcProvider(nodeFetchRequest(rpcUrl), chainId, { staticNetwork: true, batchMaxCount: 1 });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    let data: string;
    try {
      // staticNetwork: ethers itself never asks the node which chain it serves.
      const nodeChainId = Number(await Promise.race([provider.send('eth_chainId', []), timeout]));
      if (!Number.isSafeInteger(nodeChainId)) return { outcome: 'unreachable', reason: 'eth_chainId: no chain id' };
      if (nodeChainId !== chainId) return { outcome: 'wrong-chain', nodeChainId };
      data = await Promise.race([provider.call({ to: router, data: ROUTER.encodeFunctionData('validity') }), timeout]);
    } catch (err) {
      // A revert (no such function, no fallback) is the router's answer; anything else is the node's failure.
      const code = (err as { code?: unknown }).code;
      if (code === 'CALL_EXCEPTION') return { outcome: 'not-exposed', reason: 'validity() reverted' };
      return { outcome: 'unreachable', reason: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
    }
    let seconds: bigint;
    try {
      [seconds] = ROUTER.decodeFunctionResult('validity', data) as unknown as [bigint];
    } catch {
      // No code at the address, or a fallback that answers with something else.
      return {
        outcome: 'not-exposed',
        reason: `validity() answered ${data.length > 66 ? 'an unexpected value' : data}`,
      };
    }
    const routerSeconds = Number(seconds);
    return { outcome: routerSeconds === configuredSeconds ? 'matches' : 'differs', routerSeconds };
  } finally {
    clearTimeout(timer);
    provider.destroy();
  }
}

/**
 * Checks every served chain's validity setting against its router. Throws a ConfigError naming
 * each chain whose router disagrees; logs the chains it could not check.
 */
export async function checkQuoteValidity(
  chains: readonly ChainSignerConfig[],
  deployments: ChainDeployments,
  logger: Logger,
  timeoutMs = 5_000,
): Promise<void> {
  const results = await Promise.all(
    chains.map(async (chain) => {
      const deployment = deployments[chain.chainId];
      const check: ValidityCheck = deployment?.rpcUrl
        ? await askRouterValidity(
            deployment.rpcUrl,
            chain.chainId,
            deployment.contracts.router,
            chain.quoteValiditySeconds,
            timeoutMs,
          )
        : { outcome: 'no-node', reason: 'CHAINS gives no rpcUrl for this chain' };
      return { chain, deployment, check };
    }),
  );
  const problems: string[] = [];
  for (const { chain, deployment, check } of results) {
    const setting = `QUOTE_VALIDITY_SECONDS_${chain.chainId}`;
    const fields = { chainId: chain.chainId, validitySeconds: chain.quoteValiditySeconds };
    if (check.outcome === 'matches') logger.info('quote validity matches the router', fields);
    else if (check.outcome === 'wrong-chain') {
      problems.push(
        `CHAINS (chains.${chain.chainId}.rpcUrl): the node serves chain ${check.nodeChainId}, not ${chain.chainId}`,
      );
    } else if (check.outcome === 'differs') {
      problems.push(
        `${setting} (quoteValiditySeconds_${chain.chainId}): is ${chain.quoteValiditySeconds} but the router ` +
          `${deployment!.contracts.router} says validity() = ${check.routerSeconds}; set it to ${check.routerSeconds}`,
      );
    } else {
      logger.warn(`quote validity not checked against the router; deadlines use ${setting} as set`, {
        ...fields,
        reason: check.reason,
        node: deployment?.rpcUrl ? maskUrl(deployment.rpcUrl) : undefined,
      });
    }
  }
  throwConfigErrors(problems);
}
