/**
 * The router's load for the ledger's benchmarks (ledger.bench.ts, ledger-traces.bench.ts): one
 * devnet chain (8453, anvil) with its test user approved on the router, and the calldata of a
 * router swap signed with the chain's API key outside the service, each with its own signature
 * (the fee varies with `n`) and amount, that executes, or reverts for a minimum no curve pays
 * (InsufficientOutput).
 */
import { Interface, JsonRpcProvider, NonceManager, Wallet } from 'ethers';
import { TestTokenArtifact } from '@pmm/contracts';
import { createDigestSigner } from '@pmm/core';
import { encodeSwapCalldata, signSwapQuote } from '@pmm/protocol';
import { startSystem, type System } from '@pmm/testkit';

export interface RouterLoad {
  sys: System;
  chain: ReturnType<System['chain']>;
  provider: JsonRpcProvider;
  /** The test user, its nonces managed here. */
  user: NonceManager;
  /** A router swap's calldata: the `n`-th of the run, signed at `timestamp` (Unix s). */
  swapData(n: number, timestamp: bigint, reverts: boolean): string;
}

export async function routerLoad(opts: {
  blockIntervalMs: number;
  redisUrl: string;
  batchMaxCount: number;
}): Promise<RouterLoad> {
  const sys = await startSystem({
    chains: [8453],
    blockIntervalMs: opts.blockIntervalMs,
    redisUrl: opts.redisUrl,
    services: [],
  });
  const c = sys.chain(8453);
  const provider = new JsonRpcProvider(c.rpcUrl, 8453, { staticNetwork: true, batchMaxCount: opts.batchMaxCount });
  const user = new NonceManager(new Wallet(c.testUser.privateKey, provider));
  const token = new Interface(TestTokenArtifact.abi);
  await (
    await user.sendTransaction({
      to: c.quoteToken.address,
      data: token.encodeFunctionData('approve', [c.contracts.router, 2n ** 255n]),
    })
  ).wait();
  const apiSigner = createDigestSigner(c.apiSigner.privateKey);
  const weth = c.tokens.WETH!.address;
  return {
    sys,
    chain: c,
    provider,
    user,
    swapData(n, timestamp, reverts) {
      const signed = signSwapQuote(apiSigner, {
        tokenIn: c.quoteToken.address,
        tokenOut: weth,
        timestamp,
        fee: BigInt(n % 1000),
        originRate: 0n,
        userAddress: c.testUser.address,
      });
      return encodeSwapCalldata({
        tokenIn: c.quoteToken.address,
        // Distinct signatures need distinct requests: the amount varies too.
        amountIn: 1_000_000n + BigInt(n),
        tokenOut: weth,
        minAmountOut: reverts ? 2n ** 200n : 0n,
        quoteTimestamp: timestamp,
        verificationData: signed.verificationData,
      });
    },
  };
}
