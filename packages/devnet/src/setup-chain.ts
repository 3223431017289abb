/**
 * Deploys and seeds one freshly started node and describes the result as a ChainStack.
 */
import { JsonRpcProvider } from 'ethers';
import { deployContracts } from './deploy';
import { DEVNET_ROLES, deployerWallet, devnetKey, type DevnetKey, type DevnetRole } from './devnet-keys';
import { seedChain } from './seed';
import { seedPlan } from './seed-plan';
import type { ChainStack, StackToken } from './stack';
import { TxSender } from './tx-sender';

export interface SetupChainOptions {
  chainId: number;
  rpcUrl: string;
  /** Interval mining period restored after setup; 0 means the node stays in automine. */
  blockIntervalMs: number;
  /** The router's validity (seedPlan's); default DEVNET_VALIDITY_SECONDS. */
  validitySeconds?: number;
}

/** Deploys and seeds a fresh chain (the deployer must not have sent anything on it yet). */
export async function setupChain(options: SetupChainOptions): Promise<ChainStack> {
  const { chainId, rpcUrl, blockIntervalMs, validitySeconds } = options;
  const provider = new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, batchMaxCount: 1 });
  try {
    const plan = seedPlan(chainId, validitySeconds);
    const keys = Object.fromEntries(DEVNET_ROLES.map((r) => [r, devnetKey(r, chainId)])) as Record<
      DevnetRole,
      DevnetKey
    >;
    const deployer = deployerWallet().connect(provider);
    // INVARIANT: a fresh chain, so the deployment lands at the same addresses on every chain.
    const nonce = await provider.getTransactionCount(deployer.address, 'pending');
    if (nonce !== 0) throw new Error(`chain ${chainId}: the deployer has already sent ${nonce} transactions`);
    const sender = new TxSender(deployer, provider, chainId, 0);

    // All setup transactions go to the mempool at once and are mined with evm_mine, without
    // waiting for the interval. Automine (blockIntervalMs 0) is off meanwhile: it refuses a
    // transaction whose predecessor has not arrived yet.
    if (blockIntervalMs === 0) await provider.send('evm_setAutomine', [false]);
    const contracts = deployContracts(sender, plan, keys.apiSigner.address);
    await seedChain(sender, provider, plan, contracts, keys);
    await sender.confirmAll();
    if (blockIntervalMs === 0) await provider.send('evm_setAutomine', [true]);

    const quoteToken: StackToken = {
      address: contracts.quoteToken,
      symbol: plan.quoteToken.symbol,
      decimals: plan.quoteToken.decimals,
    };
    const baseTokens = plan.baseTokens.map((b, i): StackToken => ({
      address: contracts.baseTokens[i] ?? '',
      symbol: b.symbol,
      decimals: b.decimals,
    }));
    return {
      chainId,
      rpcUrl,
      wsUrl: rpcUrl.replace(/^http/, 'ws'),
      contracts: {
        router: contracts.router,
        helper: contracts.helper,
        verifier: contracts.verifier,
        multicall3: contracts.multicall3,
      },
      quoteToken,
      baseTokens,
      apiSigner: keys.apiSigner,
      quoter: keys.quoter,
      testUser: keys.testUser,
      deployer: { address: deployer.address },
      blockIntervalMs,
      validitySeconds: plan.validitySeconds,
      tokens: Object.fromEntries([quoteToken, ...baseTokens].map((t) => [t.symbol, t])),
      references: Object.fromEntries(
        baseTokens.map((b, i) => [b.address, { feed: contracts.referenceFeeds[i] ?? '' }] as const),
      ),
    };
  } finally {
    provider.destroy();
  }
}
