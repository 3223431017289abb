/**
 * viem clients for a devnet chain, for tests. The devnet itself deploys with ethers; the tests
 * read and write with viem so that what they check does not depend on the code under test.
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Chain,
  type Account,
  type Transport,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainStack } from '@pmm/devnet';
import { until } from '../polling/until';

export interface ChainClients {
  chain: Chain;
  publicClient: PublicClient;
  wallet(privateKey: string): WalletClient<Transport, Chain, Account>;
}

/** Clients for one devnet chain, polling fast (the devnet mines quickly). */
export function chainClients(c: ChainStack): ChainClients {
  const chain = defineChain({
    id: c.chainId,
    name: `devnet-${c.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [c.rpcUrl] } },
  });
  const transport = http(c.rpcUrl, { retryCount: 0 });
  return {
    chain,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    wallet: (privateKey) =>
      createWalletClient({ chain, transport, pollingInterval: 50, account: privateKeyToAccount(privateKey as Hex) }),
  };
}

/**
 * A transaction's receipt, asked for every 50 ms until the node has it. viem's
 * waitForTransactionReceipt asks at each new block it sees: on a node that mines only when a
 * transaction comes (anvil's automine, `blockIntervalMs: 0`), a receipt missed at the block that
 * held the transaction is never asked for again, since no block follows (seen once in a full run
 * on a loaded machine: a settlement test's transaction "not confirmed" after 180 s).
 */
export function minedReceipt(publicClient: PublicClient, hash: Hex, timeoutMs = 60_000): Promise<TransactionReceipt> {
  return until(
    () => publicClient.getTransactionReceipt({ hash }).catch(() => undefined),
    timeoutMs,
    `the receipt of ${hash}`,
    50,
  );
}
