/**
 * Sends a sequence of setup transactions from one wallet without waiting for blocks: nonces are
 * assigned locally, gas parameters are fixed (no estimateGas / fee / nonce round trips), every
 * transaction goes to the node's mempool without waiting for a block, and `confirmAll` mines
 * blocks with `evm_mine` until every receipt exists, then checks that none reverted. The node must
 * NOT be in automine mode while this runs (automine refuses a nonce that arrives before its
 * predecessor).
 *
 * The transactions are signed at once but reach the node one after another, in nonce order. Sent
 * all at once, their requests could arrive out of order, and anvil once left 14 of them (nonces 5
 * to 18, the next one to mine among them) in its pool, never mined in 50 blocks, in a loaded full
 * test run; anvil's own tracker has reports of the like (foundry-rs/foundry#10122).
 */
import { getCreateAddress, type HDNodeWallet, type JsonRpcProvider, type Wallet } from 'ethers';

// Fixed limits sized to the contracts (router deployment uses about 1.6M gas), so that a few
// deployments fit one 30M-gas block; the deployer is pre-funded.
const DEPLOY_GAS = 4_000_000n;
const CALL_GAS = 500_000n;
const MAX_FEE_PER_GAS = 50_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;
const MAX_SETUP_BLOCKS = 50;

export class TxSender {
  private nonce: number;
  private readonly pending: Array<Promise<{ hash: string; nonce: number }>> = [];
  /** The last transaction's way to the node: the next one is sent once it has arrived. */
  private lastSent: Promise<unknown> = Promise.resolve();

  /** `firstNonce`: the wallet's next nonce on this chain (0 on a fresh devnet chain). */
  constructor(
    private readonly wallet: Wallet | HDNodeWallet,
    private readonly provider: JsonRpcProvider,
    private readonly chainId: number,
    firstNonce: number,
  ) {
    this.nonce = firstNonce;
  }

  get address(): string {
    return this.wallet.address;
  }

  /** Queues a deployment; returns the address the contract will get (CREATE: deployer, nonce). */
  deploy(data: string): string {
    const nonce = this.send({ data, gasLimit: DEPLOY_GAS });
    return getCreateAddress({ from: this.wallet.address, nonce });
  }

  /** Queues a call to `to`. */
  call(to: string, data: string): void {
    this.send({ to, data, gasLimit: CALL_GAS });
  }

  /** Mines until every queued transaction has a receipt; throws if one reverted. */
  async confirmAll(): Promise<void> {
    const sent = await Promise.all(this.pending);
    let waiting = sent;
    for (let block = 0; waiting.length > 0; block++) {
      if (block >= MAX_SETUP_BLOCKS) throw new Error(await this.stuck(waiting));
      await this.provider.send('evm_mine', []);
      const receipts = await Promise.all(waiting.map((t) => this.provider.getTransactionReceipt(t.hash)));
      receipts.forEach((receipt, i) => {
        if (receipt && receipt.status !== 1) {
          throw new Error(`setup transaction ${receipt.hash} (nonce ${waiting[i]?.nonce}) reverted`);
        }
      });
      waiting = waiting.filter((_, i) => !receipts[i]);
    }
  }

  /** Why transactions were not mined: what the node says of each, its nonce and base fee. */
  private async stuck(waiting: { hash: string; nonce: number }[]): Promise<string> {
    const facts = await Promise.all([
      this.provider.getTransactionCount(this.wallet.address, 'latest').catch((e: Error) => e.message),
      this.provider.getBlock('latest').then(
        (b) => b?.baseFeePerGas?.toString(),
        (e: Error) => e.message,
      ),
      ...waiting.map((t) =>
        this.provider.send('eth_getTransactionByHash', [t.hash]).then(
          (found: { blockNumber?: string } | null) =>
            `nonce ${t.nonce} ${t.hash}: ${found ? `known to the node, block ${found.blockNumber ?? 'none'}` : 'unknown to the node'}`,
          (e: Error) => `nonce ${t.nonce}: ${e.message}`,
        ),
      ),
    ]);
    const [mined, baseFee, ...each] = facts;
    return (
      `${waiting.length} setup transactions not mined after ${MAX_SETUP_BLOCKS} blocks ` +
      `(chain ${this.chainId}: the deployer's mined nonce ${mined}, base fee ${baseFee}; ${each.join('; ')})`
    );
  }

  private send(tx: { to?: string; data: string; gasLimit: bigint }): number {
    const nonce = this.nonce++;
    const signing = this.wallet.signTransaction({
      ...tx,
      nonce,
      type: 2,
      chainId: this.chainId,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
    });
    signing.catch(() => undefined); // awaited below, after the previous send: no unhandled rejection meanwhile
    // After the previous one has reached the node (whatever its outcome): nonce order.
    const sending = this.lastSent.then(async () => {
      const hash = (await this.provider.send('eth_sendRawTransaction', [await signing])) as string;
      return { hash, nonce };
    });
    this.lastSent = sending.catch(() => undefined); // reported by confirmAll; no unhandled rejection meanwhile
    this.pending.push(sending);
    return nonce;
  }
}
