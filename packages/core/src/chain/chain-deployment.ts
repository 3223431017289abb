/**
 * Where a chain lives: node URLs and contract addresses. Services read a map of these from
 * the `chains` setting (config file or `CHAINS` env JSON). The devnet's stack file has the
 * same `chains` shape, so it can be used directly as a config file.
 */
import Ajv, { type JSONSchemaType, type ValidateFunction } from 'ajv';
import { ChainContracts, findChain, MAX_TOKEN_DECIMALS, parseAddress } from '@pmm/protocol';
import { registerSecretUrl } from '../settings/secrets';
import {
  REFERENCE_BAND_FIELDS,
  REFERENCE_MODES,
  type PairReference,
  type ReferenceBand,
} from '../reference/pair-reference';

export interface ChainDeployment {
  chainId: number;
  /** HTTP JSON-RPC URL (eth_call, polling when no wsUrl). */
  rpcUrl?: string;
  /** WebSocket JSON-RPC URL (newHeads). */
  wsUrl?: string;
  /**
   * HTTP JSON-RPC URL of a second, independent node: the indexer believes a change of the pair
   * registry only when this node reads the same at the same block.
   */
  confirmRpcUrl?: string;
  contracts: ChainContracts;
  /**
   * Decimals the operator vouches for, by checksummed token address: the indexer leaves a
   * token out of the registry when its `decimals()` answers anything else (a node's answer
   * alone must not rescale a published book).
   */
  pinnedDecimals?: Record<string, number>;
  /**
   * Each pair's reference feed and its own band values, by checksummed base token address
   * (pair-reference.ts): the indexer holds the pair's curve against it.
   */
  references?: Record<string, PairReference>;
}

/** A pair's reference as the config writes it: the feed and any band field of its own. */
type PairReferenceInput = { feed: string } & Partial<ReferenceBand>;

/** The config's form: any address may be left out when the chain registry knows it. */
interface ChainDeploymentInput {
  chainId: number;
  rpcUrl?: string;
  wsUrl?: string;
  confirmRpcUrl?: string;
  contracts?: Partial<ChainContracts>;
  pinnedDecimals?: Record<string, number>;
  references?: Record<string, PairReferenceInput>;
}

const bandField = (name: keyof typeof REFERENCE_BAND_FIELDS) => ({
  type: 'integer' as const,
  nullable: true as const,
  minimum: REFERENCE_BAND_FIELDS[name].range[0],
  maximum: REFERENCE_BAND_FIELDS[name].range[1],
});

const deploymentSchema: JSONSchemaType<ChainDeploymentInput> = {
  type: 'object',
  properties: {
    chainId: { type: 'integer' },
    rpcUrl: { type: 'string', nullable: true, pattern: '^https?://' },
    wsUrl: { type: 'string', nullable: true, pattern: '^wss?://' },
    confirmRpcUrl: { type: 'string', nullable: true, pattern: '^https?://' },
    contracts: {
      type: 'object',
      nullable: true,
      properties: {
        router: { type: 'string', nullable: true },
        helper: { type: 'string', nullable: true },
        verifier: { type: 'string', nullable: true },
        multicall3: { type: 'string', nullable: true },
      },
      required: [],
    },
    // Not `tokens`: the devnet's stack file, also read as a chains file, has a `tokens` map of its own.
    pinnedDecimals: {
      type: 'object',
      nullable: true,
      required: [],
      additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_TOKEN_DECIMALS },
    },
    references: {
      type: 'object',
      nullable: true,
      required: [],
      additionalProperties: {
        type: 'object',
        properties: {
          feed: { type: 'string' },
          maxDeviationBelowBps: bandField('maxDeviationBelowBps'),
          maxDeviationAboveBps: bandField('maxDeviationAboveBps'),
          maxAgeSeconds: bandField('maxAgeSeconds'),
          recoveryBlocks: bandField('recoveryBlocks'),
          mode: { type: 'string', nullable: true, enum: [...REFERENCE_MODES] },
        },
        required: ['feed'],
        additionalProperties: false,
      },
    },
  },
  required: ['chainId'],
};

/**
 * Compiled on first use: every process and test file that loads @pmm/core's index loads this
 * module, and compiling at load cost each of them ajv's load and this compilation (about
 * 0.1 CPU s) whether it reads a chains setting or not.
 */
let compiled: ValidateFunction<ChainDeploymentInput> | undefined;
const validateDeployment = () => (compiled ??= new Ajv({ allowUnionTypes: true }).compile(deploymentSchema));

/** Deployments keyed by chain id; only the declared fields are kept (a stack file carries more). */
export type ChainDeployments = Record<number, ChainDeployment>;

function checksum(where: string, value: string): string {
  try {
    return parseAddress(where, value);
  } catch {
    throw new Error(`${where}: not an address`);
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

/**
 * Validates a `{ "<chainId>": ChainDeployment }` map (the `chains` setting). Addresses the
 * config leaves out come from the chain registry (e.g. the canonical Multicall3).
 */
export function parseChainDeployments(value: unknown): ChainDeployments {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('must be an object keyed by chain id');
  const out: ChainDeployments = {};
  for (const [key, raw] of Object.entries(value)) {
    const validate = validateDeployment();
    if (!validate(raw)) {
      const e = validate.errors?.[0];
      throw new Error(`chains.${key}${e?.instancePath ?? ''}: ${e?.message ?? 'invalid'}`);
    }
    if (String(raw.chainId) !== key) throw new Error(`chains.${key}: chainId ${raw.chainId} does not match its key`);
    const known = findChain(raw.chainId);
    if (!known) throw new Error(`chains.${key}: unknown chain (known: see the chain registry)`);
    // The config wins; the registry fills what it leaves out.
    const c = { ...known.contracts, ...stripUndefined(raw.contracts ?? {}) };
    const required = (name: 'router' | 'helper' | 'verifier'): string => {
      const value = c[name];
      if (!value) throw new Error(`chains.${key}.contracts.${name}: required (the chain registry has no default)`);
      return checksum(`chains.${key}.contracts.${name}`, value);
    };
    // A hosted node's URL carries the provider's key: redacted from every log line from now on.
    for (const url of [raw.rpcUrl, raw.wsUrl]) if (url) registerSecretUrl(url);
    // The schema bounds the decimals (0 … MAX_TOKEN_DECIMALS, the range the signer accepts).
    const pinned = Object.entries(raw.pinnedDecimals ?? {}).map(
      ([address, decimals]) => [checksum(`chains.${key}.pinnedDecimals`, address), decimals] as const,
    );
    const references = Object.entries(raw.references ?? {}).map(([base, { feed, ...band }]) => {
      const where = `chains.${key}.references.${base}`;
      return [checksum(where, base), { feed: checksum(`${where}.feed`, feed), band: stripUndefined(band) }] as const;
    });
    out[raw.chainId] = {
      chainId: raw.chainId,
      rpcUrl: raw.rpcUrl ?? undefined,
      wsUrl: raw.wsUrl ?? undefined,
      ...(raw.confirmRpcUrl ? { confirmRpcUrl: raw.confirmRpcUrl } : {}),
      ...(pinned.length > 0 ? { pinnedDecimals: Object.fromEntries(pinned) } : {}),
      ...(references.length > 0 ? { references: Object.fromEntries(references) } : {}),
      contracts: {
        router: required('router'),
        helper: required('helper'),
        verifier: required('verifier'),
        multicall3: c.multicall3 ? checksum(`chains.${key}.contracts.multicall3`, c.multicall3) : undefined,
      },
    };
  }
  return out;
}
