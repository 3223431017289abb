// The packed SDK from CommonJS (sdk-package.test.ts): a swap executed with an ethers signer.
// Prints one JSON line for the test.
const { readFileSync } = require('node:fs');
const { JsonRpcProvider, Wallet, parseUnits } = require('ethers');
const { PmmClient, estimateFromBook, executeSwap } = require('@pmm/client');

async function main() {
  const stack = JSON.parse(readFileSync(process.env.STACK_FILE, 'utf8'));
  const chain = stack.chains['56'];
  const base = chain.baseTokens[0];
  const client = new PmmClient({ baseUrl: stack.gateway.url, apiKey: stack.gateway.apiKey });
  const book = await client.getOrderbook(56);
  const pair = book.pairs.find((p) => p.baseToken.toLowerCase() === base.address.toLowerCase());
  const amountIn = parseUnits('100', chain.quoteToken.decimals);
  const estimate = estimateFromBook({
    pair,
    tokenIn: chain.quoteToken.address,
    amountIn,
    baseDecimals: base.decimals,
    quoteDecimals: chain.quoteToken.decimals,
    fee: 10n,
  });
  const provider = new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true });
  const result = await executeSwap({
    client,
    wallet: new Wallet(chain.testUser.privateKey, provider),
    chainId: 56,
    router: chain.contracts.router,
    tokenIn: chain.quoteToken.address,
    tokenOut: base.address,
    amountIn,
    minAmountOut: estimate.amountOut,
    fee: 10n,
  });
  console.log(
    JSON.stringify({
      transactionHash: result.transactionHash,
      amountOut: String(result.amountOut),
      estimate: String(estimate.amountOut),
    }),
  );
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
