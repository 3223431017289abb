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
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainStack } from '@pmm/devnet';

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
