/**
 * Seeds one chain after deployment, following its SeedPlan: quoters, curves, router reserves,
 * the test user's tokens and native balances of the devnet role keys.
 */
import { PmmRouterArtifact, TestTokenArtifact } from '@pmm/contracts';
import { Interface, toQuantity, type JsonRpcProvider } from 'ethers';
import type { DeployedContracts } from './deploy';
import type { DevnetKey } from './devnet-keys';
import type { SeedPlan } from './seed-plan';
import type { TxSender } from './tx-sender';

const router = new Interface(PmmRouterArtifact.abi);
const token = new Interface(TestTokenArtifact.abi);

/** The devnet role keys of one chain. */
export interface SeedKeys {
  apiSigner: DevnetKey;
  quoter: DevnetKey;
  testUser: DevnetKey;
}

/**
 * Queues the plan's transactions on `sender` (call `sender.confirmAll()` to mine them) and sets
 * the native balances. The router's apiSigner is already set by its constructor.
 */
export async function seedChain(
  sender: TxSender,
  provider: JsonRpcProvider,
  plan: SeedPlan,
  contracts: DeployedContracts,
  keys: SeedKeys,
): Promise<void> {
  // The test user is a quoter too, so that tests can sign on-chain quote requests with the key
  // they already hold.
  for (const quoter of [keys.quoter.address, keys.testUser.address]) {
    sender.call(contracts.router, router.encodeFunctionData('setQuoter', [quoter, true]));
  }
  for (const [i, base] of plan.baseTokens.entries()) {
    const address = contracts.baseTokens[i];
    if (!address) throw new Error(`no deployed address for ${base.symbol}`);
    const c = base.curve;
    sender.call(
      contracts.router,
      router.encodeFunctionData('setCurve', [
        address,
        c.midPriceX18,
        c.askDepths,
        c.askSpreadsPpm,
        c.bidDepths,
        c.bidSpreadsPpm,
      ]),
    );
  }
  const tokens = [
    { address: contracts.quoteToken, plan: plan.quoteToken },
    ...plan.baseTokens.map((b, i) => ({ address: contracts.baseTokens[i] ?? '', plan: b })),
  ];
  for (const t of tokens) {
    sender.call(t.address, token.encodeFunctionData('mint', [contracts.router, t.plan.routerReserve]));
    sender.call(t.address, token.encodeFunctionData('mint', [keys.testUser.address, t.plan.testUserBalance]));
  }
  for (const key of [keys.apiSigner, keys.quoter, keys.testUser]) {
    await provider.send('anvil_setBalance', [key.address, toQuantity(plan.nativeBalance)]);
  }
}
