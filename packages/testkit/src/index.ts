/** @pmm/testkit: helpers for tests and benchmarks only. */
export { sampleAuditRecord } from './audit-record-sample';
export {
  CONTRACTS as HOSTILE_NODE_CONTRACTS,
  DEPTH_LIMIT as HOSTILE_NODE_DEPTH_LIMIT,
  TOKENS as HOSTILE_NODE_TOKENS,
  startHostileNode,
  type FakeBlock,
  type HostileNode,
} from './hostile-node';
export { freePort, waitForPort } from './ports';
export { processCpuSeconds, stopAll, stopProcess } from './processes';
export { privateRedis, type PrivateRedis, type PrivateRedisOptions } from './private-redis';
export { privateStackRedis, type PrivateStackRedis } from './private-stack-redis';
export { startSentinel } from './private-sentinel';
export {
  REPLICATED_CONF,
  privateReplicatedRedis,
  type PrivateReplicatedRedis,
  type PrivateReplicatedRedisOptions,
} from './private-replicated-redis';
export {
  privateRedisCluster,
  type PrivateRedisCluster,
  type PrivateRedisClusterOptions,
} from './private-redis-cluster';
export { redisTlsArgs, selfSignedCert, type TlsCert } from './tls-cert';
export { startRedirectTarget, type RedirectTarget } from './redirect-target';
export { rawExchange, parseRawResponses, type RawStep, type RawExchange, type RawResponse } from './raw-http';
export { launchBrowser, CHROMIUM_PATH, type Browser, type Page } from './browser';
export { settlesWithin, until } from './until';
export { revertName } from './revert-name';
export {
  addressArb,
  CURVE_ORDER,
  digestArb,
  MAX_UINT256,
  privateKeyArb,
  RUNS,
  testKey,
  uint256Arb,
} from './eth-arbitraries';
export { buildHangingModule, type HangingModule } from './pkcs11-hang-shim';
export { requireSoftHsm, SOFTHSM_MODULE, startSoftHsm, type SoftHsm } from './softhsm';
export { createSoftHsmRunFolder, removeSoftHsmRunFolder } from './softhsm-run-folder';
export { REPO_ROOT } from './repo-root';
export {
  spawnService,
  startService,
  startSystem,
  type ServiceOptions,
  type ServiceProcess,
  type System,
  type SystemOptions,
} from './system';
export { chainClients, type ChainClients } from './chain-clients';
export { curveOf, moveCurveMid, setCurve, type RouterOwner } from './router-curve';
export { startStack, type StartedStack, type StartStackOptions } from './started-stack';
export { devnetRegistry } from './devnet-registry';
export { publishBookHead } from './book-head';
export { commandOutcome } from './command-outcome';
export {
  jsonRpcRelay,
  withoutTracing,
  type JsonRpcFault,
  type JsonRpcRelay,
  type JsonRpcRequest,
} from './json-rpc-relay';
export {
  loadReport,
  missingRecords,
  pacedSigns,
  type Answered,
  type Refused,
  type AuditTrailAt,
  type SignLoad,
  type SignLoadOptions,
  type SignLoadResult,
} from './sign-load';
