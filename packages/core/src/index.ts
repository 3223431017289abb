/**
 * @pmm/core: the domain shared by every service. One concept per module; this file only
 * re-exports. (Several people edit this list: add lines, do not reorder.)
 */
export * from './chains';
export * from './errors';
export * from './redis-keys';
export * from './orderbook';
export * from './pair-registry';
export * from './integrator';
export * from './secrets';
export * from './logger';
export * from './metrics';
export * from './config';
export * from './chain-deployment';
export * from './redis-client';
export * from './http/request-context';
export * from './http/error-handler';
export * from './http/http-metrics';
export * from './http/health-routes';
export * from './http/serve';
export * from './abi-words';
export * from './swap-digest';
export * from './secp256k1-signer';
export * from './verification-data';
export * from './swap-calldata';
export * from './sign-swap-quote';
export * from './amm-verification';
export * from './parse-address';
export * from './parse-uint';
export * from './parse-fee';
export * from './parse-chain-id';
export * from './sign-request';
export * from './decimal';
export * from './orderbook-levels';
export * from './node-runtime';
export * from './shared-settings';
export * from './http/client-errors';
export * from './json-duplicate-key';
export * from './maybe-async';
export * from './access-updates';
export * from './redis-durability';
export * from './audit-record';
