/**
 * The indexer's declared settings: read once at boot (environment, then the optional
 * CONFIG_FILE JSON, then defaults) and validated; nothing else reads `process.env`.
 * One process indexes ONE chain (`CHAIN_ID`); run one per chain, as many replicas as wanted.
 *
 * The devnet's stack file (`.local/stack.json`) has the `chains` shape, so
 * `CONFIG_FILE=.local/stack.json CHAIN_ID=8453 QUOTER_KEY_FILE=… node dist/main.js` works.
 */
import {
  ConfigError,
  chainsSetting,
  loadConfig,
  redisConnectionUrls,
  settings,
  type ChainDeployment,
  type RedisRoleUrls,
  type ConfigSources,
  pkcs11SignTimeoutSetting,
  quoterKeySettings,
  quoterKeySource,
  type QuoterKeySource,
  SHARED_SETTINGS,
  OPERATOR_ENDPOINT_SETTINGS,
  DEFAULT_REFERENCE_MODE,
  REFERENCE_BAND_FIELDS,
  REFERENCE_MODE_DESCRIPTION,
  REFERENCE_MODES,
  type ReferenceBand,
} from '@pmm/core';
import { findChain } from '@pmm/protocol';
import { parseLadderConfig, type LadderConfig } from './domain/ladder';

/** A band field's setting: the default of every pair, from the field's one definition (core's pair-reference.ts). */
const bandSetting = (name: keyof typeof REFERENCE_BAND_FIELDS) => {
  const field = REFERENCE_BAND_FIELDS[name];
  return settings.int(field.env, field.description, field.default, field.range);
};

/** Each entry's description is the setting's documentation (README, `--help`). */
export const INDEXER_SETTINGS = {
  ...SHARED_SETTINGS,
  ...OPERATOR_ENDPOINT_SETTINGS,
  chainId: settings.int('CHAIN_ID', 'The chain this process indexes (8453, 56 or 4663). Required.', undefined, [
    1,
    2 ** 31 - 1,
  ]),
  chains: chainsSetting(
    'Chain deployments, JSON { "<id>": { chainId, rpcUrl?, wsUrl?, contracts: { router, helper, verifier, multicall3? } } } ' +
      '(or the `chains` key of CONFIG_FILE). The entry of CHAIN_ID is used: wsUrl → newHeads subscription, else rpcUrl → polling; ' +
      'multicall3 → one aggregate3 eth_call per block, else one JSON-RPC batch. Optional pinnedDecimals: { "<address>": decimals } pins ' +
      "a token's decimals: a token whose decimals() answers otherwise is left out of the registry. Optional confirmRpcUrl: a second " +
      "node's HTTP URL; a change of the pair registry is believed only when it reads the same there. Optional references: " +
      '{ "<base address>": { feed, maxDeviationBelowBps?, maxDeviationAboveBps?, maxAgeSeconds?, recoveryBlocks?, mode? } }, each ' +
      "pair's Chainlink-compatible reference feed (its answer: the base token's price in the chain's quote token) and its own " +
      'values of the REFERENCE_* settings; a pair without one is not held against a reference. Required.',
  ),
  ...quoterKeySettings(
    undefined,
    'Private key (hex) of the quoter the router whitelists for quote(); signs the EIP-712 AmmVerification of each block. Required (or QUOTER_KEY_FILE), unless QUOTER_PKCS11 is set.',
  ),
  pkcs11SignTimeoutMs: pkcs11SignTimeoutSetting(),
  bookTtlMs: settings.int(
    'BOOK_TTL_MS',
    'Staleness of the book, ms (default 10000): the book key expires this long after its last write, and is deleted when the node ' +
      'has been unreachable this long. Keep it above a few block intervals and above HEARTBEAT_MS + RPC_TIMEOUT_MS.',
    10_000,
    [1_000, 3_600_000],
  ),
  maxHeadLagMs: settings.int(
    'MAX_HEAD_LAG_MS',
    "Freshness against the clock, ms (default 12000, a few block intervals): a head older than this by this machine's clock is " +
      "not computed, and no book is served longer than this after its block's timestamp, so a node that lags yields 503. " +
      'Set it per chain (one process per chain) to a few of its block intervals plus the usual lag of its node.',
    12_000,
    [1_000, 3_600_000],
  ),
  maxHeadLeadMs: settings.int(
    'MAX_HEAD_LEAD_MS',
    "How far a head's timestamp may be ahead of this machine's clock, ms (default 5000): a head stamped later than that is not " +
      'computed (its book would be signed for, and published with, a time that has not come). Block timestamps are whole seconds ' +
      "taken when the block is made, so an honest head is ahead only by the producer's and this machine's clock errors, well " +
      'under a second with NTP; raise it only for a chain known to stamp blocks early.',
    5_000,
    [1_000, 600_000],
  ),
  maxHeadJump: settings.int(
    'MAX_HEAD_JUMP',
    'Blocks a head may jump above the last accepted one before it waits for the next head to confirm it (default 100).',
    100,
    [1, 1_000_000_000],
  ),
  maxRpcAnswerBytes: settings.int(
    'MAX_RPC_ANSWER_BYTES',
    'Largest node answer or WebSocket message, bytes (default 2097152: 3 to 5 times the answer of a block call of 50 pairs × 24 ' +
      'points, 0.4 to 0.6 MB); ' +
      'a bigger one is refused unread: the HTTP request fails, the WebSocket is closed and reopened. Raise it with pairs × ladder points.',
    2_097_152,
    [65_536, 268_435_456],
  ),
  midsRetentionSeconds: settings.int(
    'MIDS_RETENTION_SECONDS',
    "How long each block's best bid and ask of every pair are kept for markouts, s (default 604800, 7 days; the capacity plan " +
      'in docs/operations/capacity.md sizes it). Markouts of swaps older than this are unavailable.',
    604_800,
    [600, 31_536_000],
  ),
  registryRefreshMs: settings.int(
    'REGISTRY_REFRESH_MS',
    'Pair registry refresh period, ms (also on every reconnect). Default 60000.',
    60_000,
    [1_000, 86_400_000],
  ),
  heartbeatMs: settings.int(
    'HEARTBEAT_MS',
    'WebSocket heartbeat period (eth_blockNumber), ms. Default 2000.',
    2_000,
    [100, 600_000],
  ),
  rpcTimeoutMs: settings.int(
    'RPC_TIMEOUT_MS',
    'Timeout of every node request (and of the WebSocket handshake), ms. Default 3000.',
    3_000,
    [100, 120_000],
  ),
  pollIntervalMs: settings.int(
    'POLL_INTERVAL_MS',
    'Block polling period when the chain has only rpcUrl, ms. Default 1000.',
    1_000,
    [50, 600_000],
  ),
  reconnectMinMs: settings.int(
    'RECONNECT_MIN_MS',
    'First reconnect delay, ms (doubles per failed attempt). Default 250.',
    250,
    [10, 600_000],
  ),
  reconnectMaxMs: settings.int('RECONNECT_MAX_MS', 'Largest reconnect delay, ms. Default 5000.', 5_000, [10, 600_000]),
  jobLockMs: settings.int(
    'JOB_LOCK_MS',
    'BullMQ lock of a block job, ms; a job of a killed replica is taken over after about this long. Default 3000.',
    3_000,
    [500, 600_000],
  ),
  callGas: settings.int(
    'CALL_GAS',
    'Gas limit sent with the per-block eth_call; 0 (default) leaves it to the node (anvil: the block gas limit, 30M on the devnet; geth: its RPC gas cap). ' +
      "Raise it when many pairs × ladder points need more (the default ladder needs about 0.5M per pair: 30M near 60 pairs, 48M at 100), within the node's cap: a quote() that runs out of gas fails silently and cuts its ladder, a call that runs out fails the block.",
    0,
    [0, 2 ** 52],
  ),
  ladder: settings.json<LadderConfig>(
    'LADDER',
    'Ladder of quote() samples per pair and side, JSON { "default"|"<base symbol>"|"<base address>": { "asks"?: [...], "bids"?: [...] } }, ' +
      "amounts in human units of the side's INPUT token (asks: quote notionals, bids: base amounts). Default {}: asks " +
      '100…1,000,000 quote units (12 points), bids the same notionals converted at the probed price.',
    {},
    (value) => {
      try {
        return parseLadderConfig(value);
      } catch (err) {
        throw new ConfigError(err instanceof Error ? err.message : 'invalid');
      }
    },
  ),
  referenceMaxDeviationBelowBps: bandSetting('maxDeviationBelowBps'),
  referenceMaxDeviationAboveBps: bandSetting('maxDeviationAboveBps'),
  referenceMaxAgeSeconds: bandSetting('maxAgeSeconds'),
  referenceRecoveryBlocks: bandSetting('recoveryBlocks'),
  referenceMode: settings.oneOf('REFERENCE_MODE', REFERENCE_MODE_DESCRIPTION, DEFAULT_REFERENCE_MODE, REFERENCE_MODES),
  port: settings.int('PORT', 'Port of /healthz, /readyz and /metrics. Default 8090.', 8090, [0, 65535]),
  host: settings.string(
    'HOST',
    'Interface of the operator endpoints; 0.0.0.0 in a container. Default 127.0.0.1.',
    '127.0.0.1',
  ),
};

export interface IndexerConfig extends RedisRoleUrls {
  chainId: number;
  deployment: ChainDeployment;
  quoter: QuoterKeySource;
  redisKeyPrefix: string;
  bookTtlMs: number;
  maxHeadLagMs: number;
  maxHeadLeadMs: number;
  maxHeadJump: number;
  maxRpcAnswerBytes: number;
  midsRetentionSeconds: number;
  registryRefreshMs: number;
  heartbeatMs: number;
  rpcTimeoutMs: number;
  pollIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  jobLockMs: number;
  callGas: number;
  ladder: LadderConfig;
  /** The band of every pair that does not set its own values (a pair's own: the deployment's references). */
  referenceBand: ReferenceBand;
  port: number;
  host: string;
  /** Host names the operator endpoints answer (besides IPs and localhost); optional bearer token. */
  opsAllowedHosts: string[];
  opsToken: string | undefined;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
}

/**
 * Loads and validates the configuration.
 *
 * @throws ConfigError naming the setting (never echoing a secret)
 */
export function loadIndexerConfig(sources: ConfigSources = {}): IndexerConfig {
  const {
    chains,
    quoterKey,
    quoterPkcs11,
    quoterPkcs11Pin,
    pkcs11SignTimeoutMs,
    referenceMaxDeviationBelowBps,
    referenceMaxDeviationAboveBps,
    referenceMaxAgeSeconds,
    referenceRecoveryBlocks,
    referenceMode,
    ...c
  } = loadConfig(INDEXER_SETTINGS, sources);
  const referenceBand: ReferenceBand = {
    maxDeviationBelowBps: referenceMaxDeviationBelowBps,
    maxDeviationAboveBps: referenceMaxDeviationAboveBps,
    maxAgeSeconds: referenceMaxAgeSeconds,
    recoveryBlocks: referenceRecoveryBlocks,
    mode: referenceMode,
  };
  // Required: an indexer without a quoter key cannot call quote() at all.
  const quoter = quoterKeySource(
    { quoterKey, quoterPkcs11, quoterPkcs11Pin },
    { required: true, signTimeoutMs: pkcs11SignTimeoutMs, env: sources.env },
  )!;
  if (!findChain(c.chainId))
    throw new ConfigError(`CHAIN_ID (chainId): chain ${c.chainId} is not in the chain registry`);
  const deployment = chains[c.chainId];
  if (!deployment) throw new ConfigError(`CHAINS (chains): no deployment for CHAIN_ID ${c.chainId}`);
  if (!deployment.wsUrl && !deployment.rpcUrl)
    throw new ConfigError(`CHAINS (chains): chains.${c.chainId} needs wsUrl or rpcUrl`);
  if (c.reconnectMinMs > c.reconnectMaxMs)
    throw new ConfigError('RECONNECT_MIN_MS (reconnectMinMs): must not exceed RECONNECT_MAX_MS');
  if (c.bookTtlMs <= c.heartbeatMs + c.rpcTimeoutMs) {
    throw new ConfigError(
      'BOOK_TTL_MS (bookTtlMs): must exceed HEARTBEAT_MS + RPC_TIMEOUT_MS, or a live node could look lost',
    );
  }
  return { ...c, ...redisConnectionUrls(c), quoter, deployment, referenceBand };
}
