/**
 * The stack description: what a running devnet looks like (RPC URLs, contract addresses, tokens,
 * devnet keys). Written as JSON by the devnet, read by the services, the demo and the tests.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { replaceFile } from '@pmm/core';

export interface StackToken {
  address: string;
  symbol: string;
  decimals: number;
}

/** A devnet-only key pair (derivable by anyone: never use on a real chain). */
export interface StackKey {
  address: string;
  privateKey: string;
}

export interface StackContracts {
  router: string;
  helper: string;
  verifier: string;
  multicall3: string;
}

/**
 * A pair's reference: the Chainlink-compatible feed (AggregatorV3Interface) whose answer is the
 * base token's price in the chain's quote token; the indexer holds the pair's curve against it.
 */
export interface StackReference {
  feed: string;
}

export interface ChainStack {
  chainId: number;
  rpcUrl: string;
  wsUrl: string;
  contracts: StackContracts;
  quoteToken: StackToken;
  baseTokens: StackToken[];
  /** Signs swap quotes (the router's apiSigner). */
  apiSigner: StackKey;
  /** Whitelisted for the router's on-chain `quote`. */
  quoter: StackKey;
  /** Funded with native coin and tokens; also a whitelisted quoter. */
  testUser: StackKey;
  deployer: { address: string };
  /** Interval mining period; 0 means automine. */
  blockIntervalMs: number;
  /** Seconds a signed swap stays valid on the router. */
  validitySeconds: number;
  /** Every token of the chain by symbol (quote and bases). */
  tokens: Record<string, StackToken>;
  /** Each pair's reference, by base token address (what the chains setting's `references` reads). */
  references: Record<string, StackReference>;
}

export interface StackDescription {
  chains: Record<string, ChainStack>;
}

/** A chain without its service secrets: the API signer's and the quoter's addresses only. */
export type PublicChainStack = Omit<ChainStack, 'apiSigner' | 'quoter'> & {
  apiSigner: { address: string };
  quoter: { address: string };
};

export interface PublicStackDescription {
  chains: Record<string, PublicChainStack>;
}

/**
 * The stack without the services' secrets (each chain's signing and quoter keys): what a chains
 * file every service reads may hold, and what the operator's stack file records. Each service
 * is handed its own key separately (`npm start`: its environment; compose: its secrets
 * folder). The test users' keys stay: devnet wallets the demo swaps with, no service's secret.
 */
export function publicStack(stack: StackDescription): PublicStackDescription {
  const chains: Record<string, PublicChainStack> = {};
  for (const [id, chain] of Object.entries(stack.chains))
    chains[id] = {
      ...chain,
      apiSigner: { address: chain.apiSigner.address },
      quoter: { address: chain.quoter.address },
    };
  return { chains };
}

/** Writes the stack file atomically (a reader never sees half a file), creating its folder. */
export function writeStack(file: string, stack: StackDescription | PublicStackDescription): void {
  mkdirSync(path.dirname(file), { recursive: true });
  replaceFile(file, `${JSON.stringify(stack, null, 2)}\n`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function requireFields(value: unknown, where: string, fields: Record<string, 'string' | 'number' | 'object'>): void {
  if (!isObject(value)) throw new Error(`stack file: ${where} must be an object`);
  for (const [field, type] of Object.entries(fields)) {
    if (typeof value[field] !== type || value[field] === null) {
      throw new Error(`stack file: ${where}.${field} must be a ${type}`);
    }
  }
}

/**
 * Reads and checks a stack file: throws naming the first missing or mistyped field. Only the
 * required shape is checked; extra fields pass through. The API signer's and the quoter's
 * private keys are optional (a public stack, see publicStack, has their addresses only).
 */
export function readStack(file: string): StackDescription | PublicStackDescription {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  requireFields(parsed, '$', { chains: 'object' });
  const chains = (parsed as { chains: Record<string, unknown> }).chains;
  for (const [id, chain] of Object.entries(chains)) {
    const at = `chains.${id}`;
    requireFields(chain, at, {
      chainId: 'number',
      rpcUrl: 'string',
      wsUrl: 'string',
      contracts: 'object',
      quoteToken: 'object',
      baseTokens: 'object',
      apiSigner: 'object',
      quoter: 'object',
      testUser: 'object',
    });
    const c = chain as Record<string, unknown>;
    if (String(c.chainId) !== id) throw new Error(`stack file: ${at}.chainId does not match its key`);
    requireFields(c.contracts, `${at}.contracts`, {
      router: 'string',
      helper: 'string',
      verifier: 'string',
      multicall3: 'string',
    });
    const token = { address: 'string', symbol: 'string', decimals: 'number' } as const;
    requireFields(c.quoteToken, `${at}.quoteToken`, token);
    if (!Array.isArray(c.baseTokens)) throw new Error(`stack file: ${at}.baseTokens must be an array`);
    c.baseTokens.forEach((t, i) => requireFields(t, `${at}.baseTokens[${i}]`, token));
    for (const role of ['apiSigner', 'quoter']) requireFields(c[role], `${at}.${role}`, { address: 'string' });
    requireFields(c.testUser, `${at}.testUser`, { address: 'string', privateKey: 'string' });
  }
  return parsed as StackDescription | PublicStackDescription;
}
