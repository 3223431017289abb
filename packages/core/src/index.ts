/**
 * @pmm/core: the service kit every service runs on: settings, logger, metrics, Redis, the HTTP
 * shell, the secp256k1 signer and `runService()`. What the services share with the SDK
 * (the protocol) is in @pmm/protocol.
 *
 * One folder per concept; below, each folder's public names under its heading. Files not
 * exported here are programs (service/container-healthcheck.ts, redis/redis-acl-file.ts) or
 * their folder's own parts.
 */
// Settings: declared, validated configuration, the settings every service shares, the secrets registry (settings/)
export {
  ConfigError,
  defaultText,
  describeConfig,
  loadConfig,
  readConfigFile,
  secretFileReader,
  settings,
  throwConfigErrors,
  type ConfigSources,
  type Setting,
} from './settings/config';
export {
  chainsSetting,
  DURABLE_WRITE_SETTINGS,
  durabilityPolicy,
  type DurableWriteConfig,
  redisConnectionUrls,
  type RedisConnectionConfig,
  type RedisRoleUrls,
  REDIS_CONNECTION_SETTINGS,
  SHARED_SETTINGS,
  OPERATOR_ENDPOINT_SETTINGS,
  SIGN_PATH_SETTINGS,
} from './settings/shared-settings';
export {
  maskUrl,
  maskUrlCredentials,
  maskUrlsInText,
  redactText,
  registerSecret,
  registerSecretUrl,
} from './settings/secrets';

// The service shell: start-up and shutdown, readiness, logs, metrics, V8 flags (service/)
export { runService, type RunningService, type ServiceDefinition } from './service/run-service';
export { checkReadiness, type ReadinessCheck, type ReadinessReport } from './service/readiness';
export { createLogger, type Logger, type LoggerOptions } from './service/logger';
export { createMetrics, type Metrics } from './service/metrics';
export { SERVICE_NODE_FLAGS } from './service/node-runtime';

// Past capacity, a fast no: a request's deadline, bounds on the work in flight, their refusals (overload/)
export { Deadline, StepTime } from './overload/deadline';
export { InFlightLimit } from './overload/in-flight-limit';
export { LoopLag, processLoopLag } from './overload/loop-lag';
export {
  deadlineRefusal,
  overloadRefusal,
  RefusalError,
  refusalMetrics,
  type RefusalKind,
  type RefusalMetrics,
  type RefusalMetricsOptions,
} from './overload/refusals';

// The HTTP shell: one route table per port (http/)
export { normalizeError, sendErrorEnvelope, type EnvelopeTarget } from './http/error-handler';
export { healthRoutes, type HealthRoutesOptions } from './http/health-routes';
export { operatorGuard, type OperatorGuardOptions } from './http/operator-guard';
export {
  pathOf,
  queryOf,
  routeTable,
  type Route,
  type RouteMethod,
  type RouteTableOptions,
  type Step,
} from './http/route-table';
export { localsOf, requestFrame, RequestLocals, type RequestFrameOptions, type Upstream } from './http/request-frame';
export { JSON_TYPE, sendBytes, sendJson } from './http/send-json';
export { readLimitedBody } from './http/limited-body';
export { httpRequestMetrics, type HttpRequestMetrics } from './http/http-metrics';
export { LazyRequestContext, requestIdOf, type RequestContext } from './http/request-context';
export { sendError } from './http/send-error';
export { listen, shutdownOnSignals, type HttpTimeouts, type ListenOptions, type Served } from './http/serve';

// Redis: connections, key names, the two roles, users, durability, Lua commands (redis/)
export {
  closeRedis,
  createRedis,
  parseMultiHostUrl,
  redisReady,
  type MultiHostUrl,
  type RedisClient,
  type RedisRole,
} from './redis/redis-client';
export {
  DEFAULT_KEY_PREFIX,
  bookBandKey,
  bookBandLogKey,
  bookBlockKey,
  bookHashKey,
  redisKeys,
  type RedisKeys,
} from './redis/redis-keys';
export {
  REDIS_KEY_ROLES,
  closeRedisConnections,
  oneRedisServer,
  rebuildableConnection,
  recordsConnection,
  redisKeyRole,
  roleServers,
  type RedisKeyRole,
} from './redis/redis-roles';
export {
  checkRedisDurability,
  checkRedisDurabilityWhenReady,
  durabilityWarnings,
  readInfoHealth,
  type RedisDurability,
  type RedisInfoHealth,
} from './redis/redis-durability';
export {
  DURABILITY_MODES,
  DurabilityError,
  DurableWrites,
  durableCommandTimeoutMs,
  resolveDurabilityMode,
  type DurabilityMode,
  type DurabilityPolicy,
  type DurabilitySetting,
  type WriteSession,
} from './redis/durable-writes';
export { redisHealthMetrics } from './redis/redis-health-metrics';
export { commandsDir, luaCommand, type LuaCommand } from './redis/lua-command';
export {
  aclPasswordHash,
  adminAclUserLine,
  aclUserLine,
  DEFAULT_USER_OFF,
  redisRoleRule,
  redisStackUsers,
  stackAclFile,
  stackAclUserLines,
  type RedisAclSelector,
  type RedisRoleRule,
  type RedisStackUser,
  type RedisUserRole,
} from './redis/redis-acl';

// Caches kept fresh by Redis pub/sub, and the hot path that stays synchronous while cached (caches/)
export { AccessCache, type AccessCacheOptions, type AccessInvalidation } from './caches/access-cache';
export { encodeAccessUpdate, type AccessUpdate } from './caches/access-updates';
export {
  ChainUpdates,
  decodeChainUpdate,
  encodeChainUpdate,
  type ChainUpdate,
  type ChainUpdatesOptions,
} from './caches/chain-updates';
export { andThen, attempt, type MaybePromise } from './caches/maybe-async';

// Halts: the operator's stop of signing and the ledgers' trips (halts/)
export {
  HALT_SCOPE_KINDS,
  MAX_HALT_REASON,
  HALTED_RETRY_AFTER_SECONDS,
  bookHalt,
  haltedError,
  haltScopeKind,
  haltScopeName,
  haltScopeProblem,
  ledgerAuthor,
  ledgerMayTrip,
  parseActiveHalts,
  parseLedgerTrips,
  parseHaltRecord,
  scopeCoversSign,
  type BookHalt,
  type HaltRecord,
  type HaltScope,
  type HaltScopeKind,
  type HaltTrip,
  type LedgerTrips,
  type SignSubject,
} from './halts/halt-scope';
export {
  HaltStore,
  readActiveHalts,
  type ActiveHalts,
  type HaltEvent,
  type HaltHistory,
  type HaltOutcome,
} from './halts/halt-store';
export { HaltView, HaltsUnreadable, type HaltViewOptions } from './halts/halt-view';

// The audit trail's record, and its pages by period (audit/)
export {
  AUDIT_ENTRY_FIELD,
  AUDIT_FIELDS,
  DAY_MS,
  auditDay,
  auditRecordJson,
  parseAuditRecord,
  type AuditRecord,
} from './audit/audit-record';
export {
  AUDIT_CLOCK_SLACK_MS,
  auditEntryOf,
  readAuditPage,
  type AuditEntry,
  type AuditPage,
  type AuditPageRequest,
} from './audit/audit-page';

// The maker's ledger and the mid history it is marked against (ledger/)
export { ledgerEntryJson, parseLedgerEntry, type LedgerEntry } from './ledger/ledger-entry';
export { ledgerRevertJson, parseLedgerRevert, type LedgerRevert } from './ledger/ledger-revert';
export { ledgerCursorJson, parseLedgerCursor, type LedgerCursor } from './ledger/ledger-cursor';
export { quoteGapBps } from './ledger/quote-gap';
export {
  chainFates,
  FATE_CALLS,
  fateCallPeriod,
  signatureFates,
  type FateInputs,
  type FateKind,
  type FateLedger,
  type SignatureFate,
} from './ledger/signature-fates';
export { LedgerReads } from './ledger/ledger-reads';
export { fillFigures, spreadOf, type FillFigures, type Spread } from './ledger/fill-figures';
export {
  LEDGER_DAY_TTL_SECONDS,
  ledgerDay,
  ledgerDayIncrements,
  ledgerDayName,
  parseLedgerDay,
  type LedgerDayFate,
  type LedgerDayIncrement,
  type LedgerDayTotal,
} from './ledger/ledger-day-totals';
export {
  LEDGER_MARKOUT_HORIZON_SECONDS,
  LEDGER_ROLLING_SWAPS,
  parseRollingMarkout,
  rollingMarkoutJson,
  rollingMean,
  type RollingMarkout,
} from './ledger/ledger-rolling-markout';
export { midOf, midRecordJson, parseMidRecord, referenceOf, type MidRecord, type MidTop } from './ledger/mid-history';

// Indexer replicas' presence (presence/)
export {
  PRESENCE_INTERVAL_MS,
  PRESENCE_TTL_MS,
  announcePresence,
  parseIndexerPresence,
  readPresence,
  withdrawPresence,
  type IndexerPresence,
} from './presence/indexer-presence';

// Chains: deployments, JSON-RPC, HTTP to a node, token metadata (chain/)
export { parseChainDeployments, type ChainDeployment, type ChainDeployments } from './chain/chain-deployment';

// A pair's reference: its feed, its band, and its standing at each book (reference/)
export {
  decodeBandRecord,
  encodeBandRecord,
  REFERENCE_STATUSES,
  type BandRecord,
  type PairBandState,
  type ReferenceStatus,
} from './reference/band-record';
export {
  BAND_LOG_FIELD,
  BAND_LOG_MAX_ENTRIES,
  bandTransitions,
  decodeBandTransition,
  encodeBandTransition,
  type BandTransition,
} from './reference/band-transition';
export {
  DEFAULT_REFERENCE_MODE,
  REFERENCE_BAND_FIELDS,
  REFERENCE_MODE_DESCRIPTION,
  REFERENCE_MODES,
  resolveBand,
  type PairReference,
  type ReferenceBand,
  type ReferenceMode,
} from './reference/pair-reference';

// Chains, continued: JSON-RPC, HTTP to a node, token metadata (chain/)
export {
  RpcConnectionError,
  RpcError,
  RpcTimeoutError,
  blockHashRef,
  hexToNumber,
  isBlockHash,
  isHexBytes,
  isRpcObject,
  numberToHex,
  revertData,
  toRpcError,
  type BlockHashRef,
  type DroppedReason,
  type RpcOutcome,
  type RpcRequest,
  type RpcTransport,
  type TransportLimits,
} from './chain/json-rpc';
export { createHttpTransport } from './chain/json-rpc-http-transport';
export { NodeAnswerTooLarge, NodeRedirectError, nodeFetchRequest, postToNode } from './chain/node-http';
export type { NodeAnswer, PostToNodeOptions } from './chain/node-http';
export { DECIMALS_CALLDATA, SYMBOL_CALLDATA, decodeTokenDecimals, decodeTokenSymbol } from './chain/token-metadata';

// Signing keys: in memory (secp256k1) or in a PKCS#11 module, the quoter key (signing-keys/)
export {
  addressOfPublicKey,
  createDigestSigner,
  defaultSignerBackend,
  isNativeSecp256k1Available,
  rawSign,
  toRecoverableSignature,
} from './signing-keys/secp256k1-signer';
export {
  DEFAULT_PKCS11_SESSIONS,
  DEFAULT_PKCS11_SIGN_TIMEOUT_MS,
  openPkcs11Signer,
  type Pkcs11Signer,
  type Pkcs11SignerOptions,
} from './signing-keys/pkcs11-signer';
export { describePkcs11Key, parsePkcs11Uri, pkcs11UriSetting, type Pkcs11KeyRef } from './signing-keys/pkcs11-uri';
export { pkcs11SignTimeoutSetting, sizeThreadPool } from './signing-keys/pkcs11-runtime';
export {
  openQuoterKey,
  quoterKeySettings,
  quoterKeySource,
  type QuoterKeyHooks,
  type QuoterKeySource,
  type QuoterKeyValues,
} from './signing-keys/quoter-key';

// Command-line programs: their command line, their files, their exit (cli/)
export { CommandLineError, parseCommandLine, type CommandLine, type CommandLineSpec } from './cli/command-line';
export { replaceFile } from './cli/replace-file';
export { exitWhenWritten } from './cli/exit-when-written';

// `npm start`'s stack: its processes, their secrets, and how the operator commands find it (stack/)
export {
  SERVICE_MAIN,
  STACK_LOG_LEVEL,
  STACK_REBUILDABLE_REDIS_PERSISTENCE,
  STACK_REDIS_PERSISTENCE,
  gatewayEnv,
  indexerEnv,
  ledgerEnv,
  serviceCommand,
  signerEnv,
  type StackCommon,
  type StackService,
} from './stack/stack-processes';
export { secretEnvNames, splitStackEnv, type SettingsSpec, type StackEnv } from './stack/stack-secrets';
export { DEFAULT_STACK_FILE, describeRedis, operatorEnv } from './stack/operator-stack';
export type { OperatorEnv } from './stack/operator-stack';
