/** @pmm/testkit: helpers for tests only. */
export { freePort, waitForPort } from './ports';
export { stopAll, stopProcess } from './processes';
export { privateRedis, type PrivateRedis, type PrivateRedisOptions } from './private-redis';
export { rawExchange, parseRawResponses, type RawStep, type RawExchange, type RawResponse } from './raw-http';
export { until } from './until';
