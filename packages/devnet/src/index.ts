/**
 * @pmm/devnet: anvil chains with the reference contracts deployed and seeded, and the stack
 * description that tells everyone else where they are.
 */
export { startDevnet, DEFAULT_BLOCK_INTERVAL_MS } from './start-devnet';
export type { Devnet, StartDevnetOptions } from './start-devnet';
export { publicStack, readStack, writeStack } from './stack';
export type {
  ChainStack,
  PublicChainStack,
  PublicStackDescription,
  StackContracts,
  StackDescription,
  StackKey,
  StackReference,
  StackToken,
} from './stack';
export { seedPlan, DEVNET_VALIDITY_SECONDS, REFERENCE_FEED_DECIMALS } from './seed-plan';
export type { PlannedBaseToken, PlannedToken, SeedPlan } from './seed-plan';
export { deployContracts, predictDeploymentAddresses } from './deploy';
export type { DeployedContracts } from './deploy';
export { seedChain } from './seed';
export type { SeedKeys } from './seed';
export { setupChain } from './setup-chain';
export type { SetupChainOptions } from './setup-chain';
export { TxSender } from './tx-sender';
export { DEFAULT_FEED_PUBLICATION, DEFAULT_MARKET, feedPublishes, marketFromEnv, midWalk } from './market-walk';
export type { FeedPublication, MovingMarketOptions } from './market-walk';
export { skewedMid, startMovingMarket } from './devnet-market';
export type {
  CurveSkew,
  MarketControls,
  MarketPair,
  MarketPairState,
  MovingMarket,
  MovingMarketChain,
} from './devnet-market';
export { devnetKey, deployerWallet, DEVNET_ROLES, DEVNET_MNEMONIC } from './devnet-keys';
export { DEVNET_HARDFORK } from './anvil-node';
export type { DevnetKey, DevnetRole } from './devnet-keys';
