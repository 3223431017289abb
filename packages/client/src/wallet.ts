/**
 * The accounts the SDK's signing helpers take: an ethers v6 Signer, or a viem WalletClient
 * (with an account) or viem local account. viem is described here by the few members the SDK
 * calls, so that the SDK neither imports nor requires viem: an integrator on ethers installs
 * nothing more, one on viem passes its client as it is.
 */
import type { Signer } from 'ethers';

type Hex = `0x${string}`;

/** The typed data of an EIP-712 signature, in the shape ethers and viem both read. */
export interface TypedDataToSign {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** A viem local account (`privateKeyToAccount`, `mnemonicToAccount`…). */
export interface ViemLocalAccount {
  readonly type: 'local';
  readonly address: Hex;
  signTypedData(parameters: TypedDataToSign): Promise<Hex>;
}

/**
 * A viem WalletClient created with an account (`createWalletClient({ account, chain, transport })`):
 * viem then signs and sends with that account and chain without being told.
 */
export interface ViemWalletClient {
  readonly type: string;
  readonly account?: { readonly address: Hex } | undefined;
  signTypedData(parameters: TypedDataToSign): Promise<Hex>;
}

/**
 * A viem WalletClient that can also read the chain: `createWalletClient(…).extend(publicActions)`.
 * executeSwap needs it to read the allowance and wait for its transactions.
 */
export interface ViemSwapClient extends ViemWalletClient {
  call(parameters: { to: Hex; data: Hex }): Promise<{ data?: Hex | undefined }>;
  sendTransaction(parameters: { to: Hex; data: Hex }): Promise<Hex>;
  waitForTransactionReceipt(parameters: { hash: Hex }): Promise<{
    status: 'success' | 'reverted';
    logs: readonly { address: string; topics: readonly Hex[]; data: Hex }[];
  }>;
}

/** What signs the quote authorisation. */
export type TypedDataWallet = Signer | ViemWalletClient | ViemLocalAccount;
/** What submits a swap. */
export type SwapWallet = Signer | ViemSwapClient;

const isEthers = (w: TypedDataWallet): w is Signer => typeof (w as Signer).getAddress === 'function';
const isViemLocal = (w: TypedDataWallet): w is ViemLocalAccount => (w as ViemLocalAccount).type === 'local';

/** The client's account; viem would sign with none only through a node's own keys, which the SDK does not use. */
function viemAccount(client: ViemWalletClient): { readonly address: Hex } {
  if (!client.account) throw new Error('the viem WalletClient has no account: create it with `account`');
  return client.account;
}

/** The 65-byte signature of `data`, as 0x hex. */
export function signTypedDataWith(wallet: TypedDataWallet, data: TypedDataToSign): Promise<string> {
  if (isEthers(wallet)) return wallet.signTypedData(data.domain, data.types, data.message);
  if (!isViemLocal(wallet)) viemAccount(wallet); // a WalletClient must carry an account
  return wallet.signTypedData(data);
}

/** A log as both libraries give it, for ethers' Interface.parseLog. */
export interface ReceiptLog {
  address: string;
  topics: readonly string[];
  data: string;
}

/** The chain operations executeSwap needs, whichever library holds the key. */
export interface SwapAccount {
  address: string;
  /** `eth_call`; the returned data as 0x hex. */
  call(to: string, data: string): Promise<string>;
  /** Sends a transaction and waits for its receipt; throws if it reverted. */
  send(
    to: string,
    data: string,
    nonce?: number,
  ): Promise<{ hash: string; nonce?: number; logs: readonly ReceiptLog[] }>;
}

export async function swapAccountOf(wallet: SwapWallet): Promise<SwapAccount> {
  if (isEthers(wallet)) {
    return {
      address: await wallet.getAddress(),
      call: (to, data) => wallet.call({ to, data }),
      send: async (to, data, nonce) => {
        const tx = await wallet.sendTransaction({ to, data, nonce });
        const receipt = await tx.wait();
        if (!receipt || receipt.status !== 1) throw new Error(`transaction ${tx.hash} failed`);
        return { hash: tx.hash, nonce: tx.nonce, logs: receipt.logs };
      },
    };
  }
  const account = viemAccount(wallet);
  return {
    address: account.address,
    call: async (to, data) => (await wallet.call({ to: to as Hex, data: data as Hex })).data ?? '0x',
    // viem reads the pending nonce for every transaction: no nonce to carry over.
    send: async (to, data) => {
      const hash = await wallet.sendTransaction({ to: to as Hex, data: data as Hex });
      const receipt = await wallet.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} failed`);
      return { hash, logs: receipt.logs };
    },
  };
}
