/**
 * Devnet-only keys. NEVER use any of these on a real chain: every one of them is derivable by
 * anyone who reads this file.
 *
 * - The deployer is account #0 of the standard public test mnemonic, which the devnet nodes are
 *   started with and pre-fund (anvil's default, and Hardhat's), so deployment needs no funding step.
 * - Role keys are keccak256(utf8(`pmm-devnet:<role>:<chainId>`)): deterministic (same stack file
 *   after every restart) and different per chain, like the production keys.
 */
import { HDNodeWallet, Wallet, keccak256, toUtf8Bytes } from 'ethers';

/** The public test mnemonic (anvil's and Hardhat's default): every devnet node pre-funds its accounts. */
export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';

/** The roles that get a derived key on each chain. */
export type DevnetRole = 'apiSigner' | 'quoter' | 'testUser';

export const DEVNET_ROLES: readonly DevnetRole[] = ['apiSigner', 'quoter', 'testUser'];

/** A derived devnet key pair (0x-prefixed lowercase private key, checksummed address). */
export interface DevnetKey {
  address: string;
  privateKey: string;
}

// Derivation is pure but not free (PBKDF2 for the mnemonic, EC multiplications for addresses):
// computed once per process, since every chain and every restart asks again.
const keyCache = new Map<string, DevnetKey>();
let deployer: HDNodeWallet | undefined;

/** The private key of a devnet role on a chain: keccak256(utf8(`pmm-devnet:<role>:<chainId>`)). */
export function devnetKey(role: DevnetRole, chainId: number): DevnetKey {
  const label = `pmm-devnet:${role}:${chainId}`;
  let key = keyCache.get(label);
  if (!key) {
    const privateKey = keccak256(toUtf8Bytes(label));
    key = { address: new Wallet(privateKey).address, privateKey };
    keyCache.set(label, key);
  }
  return { ...key };
}

/** Account #0 (m/44'/60'/0'/0/0 of the test mnemonic): deploys everything on every chain. */
export function deployerWallet(): HDNodeWallet {
  deployer ??= HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, "m/44'/60'/0'/0/0");
  return deployer;
}
