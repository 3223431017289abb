/**
 * `npm run demo`: against the running local stack (`npm start`), on every chain: show the top
 * of each pair's book, then buy the first base token with 1,000 quote tokens through the SDK
 * (sign, approve, execute) and print what the account received next to the book's estimate.
 * Reads the gateway URL, the API key and the devnet test accounts from .local/stack.json.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { formatUnits, JsonRpcProvider, parseUnits, Wallet } from 'ethers';
import { estimateFromBook, executeSwap, PmmClient } from '@pmm/client';

interface StackToken {
  address: string;
  symbol: string;
  decimals: number;
}
interface StackChain {
  chainId: number;
  rpcUrl: string;
  contracts: { router: string };
  quoteToken: StackToken;
  baseTokens: StackToken[];
  testUser: { privateKey: string };
}
interface Stack {
  chains: Record<string, StackChain>;
  gateway?: { url: string; apiKey: string };
}

const FEE = 10n; // 1 bps

export async function runDemo(
  stackFile: string,
  log: (line: string) => void = console.log,
): Promise<{ chainId: number; received: bigint; estimated: bigint }[]> {
  const stack = JSON.parse(readFileSync(stackFile, 'utf8')) as Stack;
  if (!stack.gateway) throw new Error(`${stackFile} has no gateway entry: start the stack with \`npm start\` first`);
  const client = new PmmClient({ baseUrl: stack.gateway.url, apiKey: stack.gateway.apiKey });
  const results = [];
  for (const chain of Object.values(stack.chains)) {
    const book = await client.getOrderbook(chain.chainId);
    log(`\nchain ${chain.chainId}: block ${book.blockNumber}`);
    for (const pair of book.pairs) {
      const base = chain.baseTokens.find((t) => t.address.toLowerCase() === pair.baseToken.toLowerCase());
      const bid = pair.bids[0];
      const ask = pair.asks[0];
      log(
        `  ${base?.symbol ?? pair.baseToken}/${chain.quoteToken.symbol}: best bid ${bid ? `${bid.price} × ${bid.amount}` : '—'}, best ask ${ask ? `${ask.price} × ${ask.amount}` : '—'}`,
      );
    }
    const base = chain.baseTokens[0]!;
    const pair = book.pairs.find((p) => p.baseToken.toLowerCase() === base.address.toLowerCase());
    if (!pair) throw new Error(`chain ${chain.chainId}: ${base.symbol} is not in the book`);
    const amountIn = parseUnits('1000', chain.quoteToken.decimals);
    const estimate = estimateFromBook({
      pair,
      tokenIn: chain.quoteToken.address,
      amountIn,
      baseDecimals: base.decimals,
      quoteDecimals: chain.quoteToken.decimals,
      fee: FEE,
    });
    const signer = new Wallet(
      chain.testUser.privateKey,
      // The devnet mines a block every 0.75 to 2 s: ethers' default poll, every 4 s, would wait up
      // to 4 s more for each of the approval and the swap.
      new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true, pollingInterval: 250 }),
    );
    const result = await executeSwap({
      client,
      wallet: signer,
      chainId: chain.chainId,
      router: chain.contracts.router,
      tokenIn: chain.quoteToken.address,
      tokenOut: base.address,
      amountIn,
      slippageBps: 50,
      fee: FEE,
    });
    const received = result.amountOut ?? 0n;
    log(
      `  swapped 1000 ${chain.quoteToken.symbol} for ${formatUnits(received, base.decimals)} ${base.symbol} ` +
        `(quoted ${formatUnits(BigInt(result.quote.amountOut ?? 0), base.decimals)} at block ${result.quote.blockNumber}, ` +
        `book estimate ${formatUnits(estimate.amountOut, base.decimals)}; tx ${result.transactionHash})`,
    );
    results.push({ chainId: chain.chainId, received, estimated: estimate.amountOut });
  }
  return results;
}

if (require.main === module) {
  const stackFile = process.argv[2] ?? path.resolve(__dirname, '..', '..', '..', '.local', 'stack.json');
  runDemo(stackFile).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
