/**
 * Any number of pairs on a devnet chain, for the indexer's benches: the devnet seeds two base
 * tokens; this deploys extra TestTokens (18, 8 and 6 decimals in turn), mints the router
 * reserves of each, and lists exactly the first `n` through the router's owner functions
 * (setCurve / delistToken), with curves shaped like WETH's scaled to each token's decimals.
 *
 * Transactions are mined by the chain's own interval: on anvil, evm_setAutomine(true) replaces
 * interval mining, and evm_setAutomine(false) then leaves no mining at all.
 */
import { ContractFactory, Interface, JsonRpcProvider, NonceManager } from 'ethers';
import { MockV3AggregatorArtifact, PmmRouterArtifact, TestTokenArtifact } from '@pmm/contracts';
import { REFERENCE_FEED_DECIMALS, deployerWallet, seedPlan, type ChainStack } from '@pmm/devnet';

const router = new Interface(PmmRouterArtifact.abi);
const token = new Interface(TestTokenArtifact.abi);

export class BenchPairs {
  private constructor(
    private readonly chain: ChainStack,
    private readonly provider: JsonRpcProvider,
    private readonly owner: NonceManager,
    private readonly curveArgs: (decimals: number, mid: bigint) => unknown[],
    /** Every base token that can be listed, the devnet's first, and each one's decimals. */
    private readonly tokens: { address: string; decimals: number }[],
    /** The feed deployed for the i-th token (references()). */
    private readonly feeds: string[] = [],
  ) {}

  /** Deploys and funds enough extra tokens on `chain` for `maxPairs` pairs. */
  static async create(chain: ChainStack, maxPairs: number): Promise<BenchPairs> {
    const provider = new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true });
    // A receipt may be missing right after sending (anvil): ethers then polls, every 4 s by default.
    provider.pollingInterval = 50;
    const owner = new NonceManager(deployerWallet().connect(provider));
    const weth = seedPlan(chain.chainId).baseTokens[0]!;
    const curveArgs = (decimals: number, mid: bigint) => {
      const scale = 10n ** BigInt(decimals);
      const depths = [10n * scale, 50n * scale, 200n * scale];
      return [
        (mid * 10n ** 6n * 10n ** 18n) / scale,
        depths,
        weth.curve.askSpreadsPpm,
        depths,
        weth.curve.bidSpreadsPpm,
      ];
    };
    const factory = new ContractFactory(TestTokenArtifact.abi, TestTokenArtifact.bytecode, owner);
    const extra: { address: string; decimals: number }[] = [];
    for (let i = 0; i < maxPairs - chain.baseTokens.length; i++) {
      const decimals = [18, 8, 6][i % 3]!;
      const t = await factory.deploy(`Bench ${i}`, `BT${i}`, decimals);
      extra.push({ address: await t.getAddress(), decimals });
    }
    const txs = [];
    for (const t of extra)
      txs.push(
        await owner.sendTransaction({
          to: t.address,
          data: token.encodeFunctionData('mint', [chain.contracts.router, 150n * 10n ** BigInt(t.decimals)]),
        }),
      );
    await Promise.all(txs.map((tx) => tx.wait()));
    const seeded = chain.baseTokens.map((b) => ({ address: b.address, decimals: b.decimals }));
    return new BenchPairs(chain, provider, owner, curveArgs, [...seeded, ...extra]);
  }

  /** Lists exactly the first `n` base tokens (delists the others); resolves once mined. */
  async list(n: number): Promise<void> {
    const routerAddress = this.chain.contracts.router;
    const current = await this.provider.call({ to: routerAddress, data: router.encodeFunctionData('listedTokens') });
    // The first entry is the quote token, never delisted.
    const listed = new Set((router.decodeFunctionResult('listedTokens', current)[0] as string[]).slice(1));
    const wanted = this.tokens.slice(0, n);
    const changes = [];
    for (const a of listed)
      if (!wanted.some((t) => t.address === a))
        changes.push(
          await this.owner.sendTransaction({ to: routerAddress, data: router.encodeFunctionData('delistToken', [a]) }),
        );
    for (const [i, t] of wanted.entries()) {
      if (listed.has(t.address)) continue;
      changes.push(
        await this.owner.sendTransaction({
          to: routerAddress,
          data: router.encodeFunctionData('setCurve', [t.address, ...this.curveArgs(t.decimals, BigInt(100 + i))]),
        }),
      );
    }
    await Promise.all(changes.map((tx) => tx.wait()));
  }

  /**
   * A reference feed for each of the first `n` base tokens, as the chains setting's `references`
   * names them: the devnet's own for its seeded tokens, a `MockV3Aggregator` answering the listed
   * curve's mid for each other one (deployed once, on first ask).
   */
  async references(n: number): Promise<Record<string, { feed: string }>> {
    const out: Record<string, { feed: string }> = {};
    const factory = new ContractFactory(MockV3AggregatorArtifact.abi, MockV3AggregatorArtifact.bytecode, this.owner);
    for (const [i, t] of this.tokens.slice(0, n).entries()) {
      const seeded = this.chain.references[t.address];
      if (seeded) {
        out[t.address] = { feed: seeded.feed };
        continue;
      }
      // The mid `list` gives the i-th token: 100 + i quote tokens.
      this.feeds[i] ??= await (
        await factory.deploy(REFERENCE_FEED_DECIMALS, BigInt(100 + i) * 10n ** BigInt(REFERENCE_FEED_DECIMALS))
      ).getAddress();
      out[t.address] = { feed: this.feeds[i] };
    }
    return out;
  }

  close(): void {
    this.provider.destroy();
  }
}
