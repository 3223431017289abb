/**
 * Deploys the reference contracts on one chain. INVARIANT: the deployer (test mnemonic account #0)
 * sends exactly these transactions in exactly this order as its first transactions on every
 * chain, so every contract has the same address on every chain (CREATE address = f(deployer,
 * nonce)); `predictDeploymentAddresses` states those addresses, and setupChain checks that the
 * deployer starts at nonce 0.
 */
import {
  MockV3AggregatorArtifact,
  Multicall3Artifact,
  PmmHelperArtifact,
  PmmRouterArtifact,
  TestTokenArtifact,
  VerificationImplArtifact,
} from '@pmm/contracts';
import { ContractFactory, getCreateAddress, type InterfaceAbi } from 'ethers';
import { REFERENCE_FEED_DECIMALS, type SeedPlan } from './seed-plan';
import type { TxSender } from './tx-sender';

/** Addresses of everything deployed on a chain (same on every chain). */
export interface DeployedContracts {
  multicall3: string;
  verifier: string;
  quoteToken: string;
  /** Base tokens in seed-plan order (WETH, WBTC). */
  baseTokens: string[];
  router: string;
  helper: string;
  /** Each base token's reference feed (@chainlink/contracts' MockV3Aggregator), in seed-plan order. */
  referenceFeeds: string[];
}

interface Artifact {
  abi: InterfaceAbi;
  bytecode: string;
}

function deployData(artifact: Artifact, args: unknown[]): string {
  const tx = new ContractFactory(artifact.abi, artifact.bytecode).interface.encodeDeploy(args);
  return artifact.bytecode + tx.slice(2);
}

/** The addresses the deployment order gives, for a deployer with a fresh nonce 0. */
export function predictDeploymentAddresses(deployer: string, baseTokenCount: number): DeployedContracts {
  const at = (nonce: number): string => getCreateAddress({ from: deployer, nonce });
  const firstBase = 3;
  const router = firstBase + baseTokenCount;
  return {
    multicall3: at(0),
    verifier: at(1),
    quoteToken: at(2),
    baseTokens: Array.from({ length: baseTokenCount }, (_, i) => at(firstBase + i)),
    router: at(router),
    helper: at(router + 1),
    referenceFeeds: Array.from({ length: baseTokenCount }, (_, i) => at(router + 2 + i)),
  };
}

/**
 * Deploys Multicall3, VerificationImpl, the quote token, the base tokens, PmmRouter, PmmHelper
 * and a reference feed per base token (answering the seed plan's price) in that order (queued on `sender`; call `sender.confirmAll()` to mine them). The deployer must
 * not have sent any transaction on this chain before.
 */
export function deployContracts(sender: TxSender, plan: SeedPlan, apiSigner: string): DeployedContracts {
  const token = (t: { name: string; symbol: string; decimals: number }): string =>
    deployData(TestTokenArtifact, [t.name, t.symbol, t.decimals]);

  const multicall3 = sender.deploy(deployData(Multicall3Artifact, []));
  const verifier = sender.deploy(deployData(VerificationImplArtifact, []));
  const quoteToken = sender.deploy(token(plan.quoteToken));
  const baseTokens = plan.baseTokens.map((base) => sender.deploy(token(base)));
  const router = sender.deploy(deployData(PmmRouterArtifact, [quoteToken, apiSigner, verifier, plan.validitySeconds]));
  const helper = sender.deploy(deployData(PmmHelperArtifact, [router]));
  const referenceFeeds = plan.baseTokens.map((base) =>
    sender.deploy(deployData(MockV3AggregatorArtifact, [REFERENCE_FEED_DECIMALS, base.referenceAnswer])),
  );

  return { multicall3, verifier, quoteToken, baseTokens, router, helper, referenceFeeds };
}
