/**
 * The whole swap flow of the spec (4.3): sign through the API, approve the router for
 * `amountIn` when the allowance is short, send the returned calldata to the router, and read
 * the amount received from the router's `Swapped` event.
 */
import { Contract, Interface, Signer, TransactionReceipt } from 'ethers';
import type { PmmClient } from './pmm-client';
import type { SignSwapResponse } from '@pmm/protocol';

const ERC20 = [
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
];

/** The reference router's event; the production router emits the same signed fields. */
export const SWAPPED_EVENT = new Interface([
  'event Swapped(address indexed user, address indexed tokenIn, address indexed tokenOut, uint256 amountIn, uint256 amountOut, uint256 fee, uint256 originRate, uint256 quoteTimestamp)',
]);

export interface ExecuteSwapParams {
  client: PmmClient;
  /** The integrator's whitelisted account; it submits the transaction. */
  signer: Signer;
  chainId: number;
  router: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  minAmountOut?: bigint;
  fee: string | number | bigint;
}

export interface ExecuteSwapResult {
  quote: SignSwapResponse;
  receipt: TransactionReceipt;
  /** From the `Swapped` event; undefined if the router emitted none we recognise. */
  amountOut?: bigint;
}

export async function executeSwap(p: ExecuteSwapParams): Promise<ExecuteSwapResult> {
  const user = await p.signer.getAddress();
  const token = new Contract(p.tokenIn, ERC20, p.signer);
  const allowance = (await token.getFunction('allowance')(user, p.router)) as bigint;
  let nonce: number | undefined;
  if (allowance < p.amountIn) {
    const approval = (await token.getFunction('approve')(p.router, p.amountIn)) as {
      nonce: number;
      wait(): Promise<unknown>;
    };
    await approval.wait();
    // The swap goes right after the approval: ethers caches an identical eth_getTransactionCount
    // for 250 ms, so on fast chains it would reuse the approval's nonce. Say it explicitly.
    nonce = approval.nonce + 1;
  }
  // Sign after the approval so that the quote is as fresh as possible when the swap lands.
  const quote = await p.client.signSwap({
    chainId: p.chainId,
    tokenIn: p.tokenIn,
    tokenOut: p.tokenOut,
    fee: p.fee,
    userAddress: user,
    amountIn: p.amountIn,
    minAmountOut: p.minAmountOut ?? 0n,
  });
  if (!quote.calldata) throw new Error('the API answered without calldata although amountIn was sent');
  const tx = await p.signer.sendTransaction({ to: p.router, data: quote.calldata, nonce });
  const receipt = await tx.wait();
  if (!receipt || receipt.status !== 1) throw new Error(`swap transaction ${tx.hash} failed`);
  let amountOut: bigint | undefined;
  for (const log of receipt.logs) {
    const parsed = SWAPPED_EVENT.parseLog(log);
    if (parsed && log.address.toLowerCase() === p.router.toLowerCase()) amountOut = parsed.args.amountOut as bigint;
  }
  return { quote, receipt, amountOut };
}
