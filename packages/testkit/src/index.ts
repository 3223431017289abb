/** @pmm/testkit: helpers for tests and benchmarks only. */
// browser/: headless Chromium
export { launchBrowser, CHROMIUM_PATH, type Browser, type Page } from './browser/browser';

// chain/: devnet chains (viem clients, curves, revert names, an indexer's registry and book head), faulty nodes
export { publishBookHead } from './chain/book-head';
export { chainClients, minedReceipt, type ChainClients } from './chain/chain-clients';
export { devnetRegistry } from './chain/devnet-registry';
export {
  CONTRACTS as HOSTILE_NODE_CONTRACTS,
  DEPTH_LIMIT as HOSTILE_NODE_DEPTH_LIMIT,
  TOKENS as HOSTILE_NODE_TOKENS,
  startHostileNode,
  type FakeBlock,
  type HostileNode,
} from './chain/hostile-node';
export {
  jsonRpcRelay,
  withoutTracing,
  type JsonRpcFault,
  type JsonRpcRelay,
  type JsonRpcRequest,
} from './chain/json-rpc-relay';
export { startRedirectTarget, type RedirectTarget } from './chain/redirect-target';
export { revertName } from './chain/revert-name';
export { curveOf, moveCurveMid, setCurve, setReference, type RouterOwner } from './chain/router-curve';
export {
  approveRouter,
  bookAt,
  curveOn,
  moveMarket,
  sendSwap,
  signFirm,
  swapChain,
  takerBalance,
  type FirmSign,
  type SwapChain,
} from './chain/taker-swaps';

// http/: HTTP over a bare socket
export { rawExchange, parseRawResponses, type RawStep, type RawExchange, type RawResponse } from './http/raw-http';

// load/: the fault drills' sign load and its audit count
export {
  loadReport,
  missingRecords,
  closedSigns,
  KNEE_CLIENTS,
  pacedSigns,
  type Answered,
  type Refused,
  type AuditTrailAt,
  type SignLoad,
  type SignLoadOptions,
  type SignLoadResult,
} from './load/sign-load';
export { RawHttpPool, type RawAnswer } from './load/raw-http-pool';

// pkcs11/: SoftHSM2 tokens, their run folder, a module that hangs
export { buildHangingModule, type HangingModule } from './pkcs11/pkcs11-hang-shim';
export { requireSoftHsm, SOFTHSM_MODULE, startSoftHsm, type SoftHsm } from './pkcs11/softhsm';
export { createSoftHsmRunFolder, removeSoftHsmRunFolder } from './pkcs11/softhsm-run-folder';

// polling/: waiting for a condition
export { settlesWithin, until } from './polling/until';

// redis/: private Redis servers: single, the stack's two, replicated, Sentinel, Cluster, TLS; command outcomes
export { commandOutcome } from './redis/command-outcome';
export { privateRedis, type PrivateRedis, type PrivateRedisOptions } from './redis/private-redis';
export {
  privateRedisCluster,
  type PrivateRedisCluster,
  type PrivateRedisClusterOptions,
} from './redis/private-redis-cluster';
export {
  REPLICATED_CONF,
  privateReplicatedRedis,
  type PrivateReplicatedRedis,
  type PrivateReplicatedRedisOptions,
} from './redis/private-replicated-redis';
export { startSentinel } from './redis/private-sentinel';
export { privateStackRedis, type PrivateStackRedis } from './redis/private-stack-redis';
export { redisTlsArgs, selfSignedCert, type TlsCert } from './redis/tls-cert';

// samples/: sample records and property-test generators
export { sampleAuditRecord } from './samples/audit-record-sample';
export { sampleLedgerEntry } from './samples/ledger-entry-sample';
export { sampleLedgerRevert } from './samples/ledger-revert-sample';
export {
  addressArb,
  CURVE_ORDER,
  digestArb,
  MAX_UINT256,
  privateKeyArb,
  RUNS,
  testKey,
  uint256Arb,
} from './samples/eth-arbitraries';

// system/: the system under test (startSystem, npm start), processes, ports, the repository root
export { freePort, waitForPort } from './system/ports';
export { processCpuSeconds, stopAll, stopProcess } from './system/processes';
export { REPO_ROOT } from './system/repo-root';
export { startStack, type StartedStack, type StartStackOptions } from './system/started-stack';
export {
  spawnService,
  startService,
  startSystem,
  type ServiceOptions,
  type ServiceProcess,
  type System,
  type SystemOptions,
} from './system/system';
