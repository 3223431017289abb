/**
 * viem clients for the devnet tests. The devnet itself deploys with ethers; the tests read and
 * write with viem so that what they check does not depend on the code under test.
 */
import { PmmRouterArtifact } from '@pmm/contracts';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
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
import type { ChainStack } from '../../src';

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
 * The custom error name a call reverted with (decoded with the router's ABI), or a failure when it
 * did not revert. Works for simulateContract/readContract and for raw `call`s.
 */
export async function revertName(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof BaseError)) throw err;
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      return reverted.data.errorName;
    }
    const withData = err.walk((e) => typeof (e as { data?: unknown }).data === 'string');
    const data = (withData as { data?: unknown } | null)?.data;
    if (typeof data === 'string' && data.startsWith('0x') && data.length >= 10) {
      return decodeErrorResult({ abi: PmmRouterArtifact.abi, data: data as Hex }).errorName;
    }
    throw err;
  }
  throw new Error('expected the call to revert, but it succeeded');
}
