/**
 * The whole swap flow of the spec (4.3): sign through the API, approve the router for
 * `amountIn` when the allowance is short, send the returned calldata to the router, and read
 * the amount received from the router's `Swapped` event. The wallet is an ethers Signer or a
 * viem WalletClient extended with publicActions (wallet.ts).
 */
import { Interface } from 'ethers';
import type { SignSwapResponse } from '@pmm/protocol';
import type { CallOptions } from './http-request';
import type { PmmClient } from './pmm-client';
import { assertQuoteLive } from './quote-deadline';
import { swapAccountOf, type SwapWallet } from './wallet';

const ERC20 = new Interface([
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
]);

/** The reference router's event; the production router emits the same signed fields. */
export const SWAPPED_EVENT = new Interface([
  'event Swapped(address indexed user, address indexed tokenIn, address indexed tokenOut, uint256 amountIn, uint256 amountOut, uint256 fee, uint256 originRate, uint256 quoteTimestamp)',
]);

export interface ExecuteSwapParams {
  client: PmmClient;
  /** The integrator's whitelisted account; it submits the transactions. */
  wallet: SwapWallet;
  chainId: number;
  router: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  /**
   * The least the swap may pay. Without it, the service derives it from its exact quote:
   * `amountOut` less `slippageBps` (default {@link DEFAULT_SLIPPAGE_BPS}). Not both.
   */
  minAmountOut?: bigint;
  slippageBps?: number;
  fee: string | number | bigint;
  /** Timeout, abort signal and retries of the sign call. */
  signOptions?: CallOptions;
}

/** The slippage executeSwap allows when given neither `minAmountOut` nor `slippageBps`: 0.5 %. */
export const DEFAULT_SLIPPAGE_BPS = 50;

export interface ExecuteSwapResult {
  quote: SignSwapResponse;
  /** The swap transaction's hash. */
  transactionHash: string;
  /** From the `Swapped` event; undefined if the router emitted none we recognise. */
  amountOut?: bigint;
}

export async function executeSwap(p: ExecuteSwapParams): Promise<ExecuteSwapResult> {
  if (p.minAmountOut !== undefined && p.slippageBps !== undefined)
    throw new TypeError('executeSwap: give minAmountOut or slippageBps, not both');
  const account = await swapAccountOf(p.wallet);
  const allowanceData = await account.call(
    p.tokenIn,
    ERC20.encodeFunctionData('allowance', [account.address, p.router]),
  );
  const [allowance] = ERC20.decodeFunctionResult('allowance', allowanceData) as unknown as [bigint];
  let nonce: number | undefined;
  if (allowance < p.amountIn) {
    const approval = await account.send(p.tokenIn, ERC20.encodeFunctionData('approve', [p.router, p.amountIn]));
    // The swap goes right after the approval: ethers caches an identical eth_getTransactionCount
    // for 250 ms, so on fast chains it would reuse the approval's nonce. Say it explicitly.
    if (approval.nonce !== undefined) nonce = approval.nonce + 1;
  }
  // Sign after the approval so that the quote is as fresh as possible when the swap lands.
  const quote = await p.client.signSwap(
    {
      chainId: p.chainId,
      tokenIn: p.tokenIn,
      tokenOut: p.tokenOut,
      fee: p.fee,
      userAddress: account.address,
      amountIn: p.amountIn,
      ...(p.minAmountOut !== undefined
        ? { minAmountOut: p.minAmountOut }
        : { slippageBps: p.slippageBps ?? DEFAULT_SLIPPAGE_BPS }),
    },
    p.signOptions,
  );
  if (!quote.calldata) throw new Error('the API answered without calldata although amountIn was sent');
  // The last moment before the transaction leaves: a wallet may have kept it waiting.
  assertQuoteLive(quote);
  const swap = await account.send(p.router, quote.calldata, nonce);
  let amountOut: bigint | undefined;
  for (const log of swap.logs) {
    if (log.address.toLowerCase() !== p.router.toLowerCase()) continue;
    const parsed = SWAPPED_EVENT.parseLog({ topics: [...log.topics], data: log.data });
    if (parsed) amountOut = parsed.args.amountOut as bigint;
  }
  return { quote, transactionHash: swap.hash, amountOut };
}
