// The packed SDK from TypeScript (sdk-package.test.ts type-checks this with tsc, then runs
// it): a swap executed with a viem wallet client, and the quote authorisation signed by viem
// and by ethers alike. Prints one JSON line for the test.
import { readFileSync } from 'node:fs';
import { PmmClient, executeSwap, signQuoteAuthorization, type AmmVerificationParams } from '@pmm/client';
import { Wallet } from 'ethers';
import { createWalletClient, defineChain, http, parseUnits, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

interface StackChain {
  chainId: number;
  rpcUrl: string;
  contracts: { router: string };
  quoteToken: { address: string; decimals: number };
  baseTokens: { address: string }[];
  testUser: { privateKey: Hex };
}
const stack = JSON.parse(readFileSync(process.env.STACK_FILE!, 'utf8')) as {
  gateway: { url: string; apiKey: string };
  chains: Record<string, StackChain>;
};
const chain = stack.chains['4663']!;
const account = privateKeyToAccount(chain.testUser.privateKey);
const viemChain = defineChain({
  id: chain.chainId,
  name: `devnet ${chain.chainId}`,
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [chain.rpcUrl] } },
});
const wallet = createWalletClient({ account, chain: viemChain, transport: http(chain.rpcUrl) }).extend(publicActions);
const client = new PmmClient({ baseUrl: stack.gateway.url, apiKey: stack.gateway.apiKey });

const result = await executeSwap({
  client,
  wallet,
  chainId: chain.chainId,
  router: chain.contracts.router,
  tokenIn: chain.quoteToken.address,
  tokenOut: chain.baseTokens[0]!.address,
  amountIn: parseUnits('100', chain.quoteToken.decimals),
  fee: 10,
});

const authorization: AmmVerificationParams = {
  chainId: chain.chainId,
  verifier: chain.contracts.router,
  tokenIn: chain.quoteToken.address,
  tokenOut: chain.baseTokens[0]!.address,
  timestampInMilisec: BigInt(Date.now()),
};
const byViem = await signQuoteAuthorization(wallet, authorization);
const byEthers = await signQuoteAuthorization(new Wallet(chain.testUser.privateKey), authorization);
console.log(
  JSON.stringify({
    transactionHash: result.transactionHash,
    amountOut: String(result.amountOut),
    sameSignature: byViem === byEthers && byViem === (await signQuoteAuthorization(account, authorization)),
  }),
);
