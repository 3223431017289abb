/**
 * Where a chain lives: node URLs and contract addresses. Services read a map of these from
 * the `chains` setting (config file or `CHAINS` env JSON). The devnet's stack file has the
 * same `chains` shape, so it can be used directly as a config file.
 */
import Ajv, { JSONSchemaType } from 'ajv';
import { getAddress } from 'ethers';
import { ChainContracts, findChain } from './chains';

export interface ChainDeployment {
  chainId: number;
  /** HTTP JSON-RPC URL (eth_call, polling when no wsUrl). */
  rpcUrl?: string;
  /** WebSocket JSON-RPC URL (newHeads). */
  wsUrl?: string;
  contracts: ChainContracts;
}

const deploymentSchema: JSONSchemaType<ChainDeployment> = {
  type: 'object',
  properties: {
    chainId: { type: 'integer' },
    rpcUrl: { type: 'string', nullable: true, pattern: '^https?://' },
    wsUrl: { type: 'string', nullable: true, pattern: '^wss?://' },
    contracts: {
      type: 'object',
      properties: {
        router: { type: 'string' },
        helper: { type: 'string' },
        verifier: { type: 'string' },
        multicall3: { type: 'string', nullable: true },
      },
      required: ['router', 'helper', 'verifier'],
    },
  },
  required: ['chainId', 'contracts'],
};

const validateDeployment = new Ajv({ allowUnionTypes: true }).compile(deploymentSchema);

/** Deployments keyed by chain id; only the declared fields are kept (a stack file carries more). */
export type ChainDeployments = Record<number, ChainDeployment>;

function checksum(where: string, value: string): string {
  try {
    return getAddress(value);
  } catch {
    throw new Error(`${where}: not an address`);
  }
}

/** Validates a `{ "<chainId>": ChainDeployment }` map (the `chains` setting). */
export function parseChainDeployments(value: unknown): ChainDeployments {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('must be an object keyed by chain id');
  const out: ChainDeployments = {};
  for (const [key, raw] of Object.entries(value)) {
    if (!validateDeployment(raw)) {
      const e = validateDeployment.errors?.[0];
      throw new Error(`chains.${key}${e?.instancePath ?? ''}: ${e?.message ?? 'invalid'}`);
    }
    if (String(raw.chainId) !== key) throw new Error(`chains.${key}: chainId ${raw.chainId} does not match its key`);
    if (!findChain(raw.chainId)) throw new Error(`chains.${key}: unknown chain (known: see the chain registry)`);
    const c = raw.contracts;
    out[raw.chainId] = {
      chainId: raw.chainId,
      rpcUrl: raw.rpcUrl ?? undefined,
      wsUrl: raw.wsUrl ?? undefined,
      contracts: {
        router: checksum(`chains.${key}.contracts.router`, c.router),
        helper: checksum(`chains.${key}.contracts.helper`, c.helper),
        verifier: checksum(`chains.${key}.contracts.verifier`, c.verifier),
        multicall3: c.multicall3 ? checksum(`chains.${key}.contracts.multicall3`, c.multicall3) : undefined,
      },
    };
  }
  return out;
}
