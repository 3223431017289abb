/**
 * The ledger's settings: the indexer's own for the node and the operator endpoints (one
 * definition, INDEXER_SETTINGS: the same rules against a lagging or flooding node), its own, the
 * limits on executed swaps (limit-settings.ts) and how their halts are confirmed durable (the
 * signer's and the risk command's DURABLE_WRITE_SETTINGS). It needs no key: it reads the chain
 * and the audit trail, and writes only its ledger and the halts its limits trip.
 */
import {
  ConfigError,
  DURABLE_WRITE_SETTINGS,
  OPERATOR_ENDPOINT_SETTINGS,
  SHARED_SETTINGS,
  loadConfig,
  redisConnectionUrls,
  settings,
  type ChainDeployment,
  type ConfigSources,
  type DurableWriteConfig,
  type RedisRoleUrls,
} from '@pmm/core';
import { findChain } from '@pmm/protocol';
import { INDEXER_SETTINGS } from '../config';
import { LIMIT_SETTINGS, limitConfigOf, type LimitConfig } from './limit-settings';

const TRACERS = ['auto', 'callTracer', 'parity', 'structLogs', 'none'] as const;
export type LedgerTracer = (typeof TRACERS)[number];

/** The node and head-guard settings, exactly the indexer's (one declaration of each). */
const NODE_SETTING_NAMES = [
  'chainId',
  'chains',
  'maxHeadLagMs',
  'maxHeadLeadMs',
  'maxHeadJump',
  'maxRpcAnswerBytes',
  'heartbeatMs',
  'rpcTimeoutMs',
  'pollIntervalMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  'host',
] as const satisfies readonly (keyof typeof INDEXER_SETTINGS)[];
const NODE_SETTINGS = Object.fromEntries(NODE_SETTING_NAMES.map((name) => [name, INDEXER_SETTINGS[name]])) as Pick<
  typeof INDEXER_SETTINGS,
  (typeof NODE_SETTING_NAMES)[number]
>;

export const LEDGER_SETTINGS = {
  ...SHARED_SETTINGS,
  ...OPERATOR_ENDPOINT_SETTINGS,
  ...NODE_SETTINGS,
  tracer: settings.oneOf(
    'LEDGER_TRACER',
    "The node's tracer for swaps made by a contract (an aggregator's executor, a split route): auto (default, the first " +
      'that works of callTracer, parity, structLogs), one of those, or none (a block holding such a transaction then waits).',
    'auto',
    TRACERS,
  ),
  maxReorgDepth: settings.int(
    'LEDGER_MAX_REORG_DEPTH',
    'Deepest reorg the ledger follows, blocks (default 256): the hashes of that many recent blocks are kept.',
    256,
    [2, 100_000],
  ),
  retryMs: settings.int(
    'LEDGER_RETRY_MS',
    'Wait before a block that failed (a trace the node could not give, a timeout) is read again, ms. Default 1000.',
    1_000,
    [10, 600_000],
  ),
  port: settings.int('PORT', 'Port of /healthz, /readyz and /metrics. Default 8095.', 8095, [0, 65535]),
  ...LIMIT_SETTINGS,
  ...DURABLE_WRITE_SETTINGS,
};

export interface LedgerConfig extends DurableWriteConfig, RedisRoleUrls {
  chainId: number;
  deployment: ChainDeployment;
  redisKeyPrefix: string;
  maxHeadLagMs: number;
  maxHeadLeadMs: number;
  maxHeadJump: number;
  maxRpcAnswerBytes: number;
  heartbeatMs: number;
  rpcTimeoutMs: number;
  pollIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  tracer: LedgerTracer;
  maxReorgDepth: number;
  retryMs: number;
  port: number;
  host: string;
  opsAllowedHosts: string[];
  opsToken: string | undefined;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  limits: LimitConfig;
}

/** @throws ConfigError naming the setting */
export function loadLedgerConfig(sources: ConfigSources = {}): LedgerConfig {
  const { chains: deployments, ...c } = loadConfig(LEDGER_SETTINGS, sources);
  if (!findChain(c.chainId))
    throw new ConfigError(`CHAIN_ID (chainId): chain ${c.chainId} is not in the chain registry`);
  const deployment = deployments[c.chainId];
  if (!deployment) throw new ConfigError(`CHAINS (chains): no deployment for CHAIN_ID ${c.chainId}`);
  if (!deployment.wsUrl && !deployment.rpcUrl)
    throw new ConfigError(`CHAINS (chains): chains.${c.chainId} needs wsUrl or rpcUrl`);
  return { ...c, ...redisConnectionUrls(c), deployment, limits: limitConfigOf(c) };
}
