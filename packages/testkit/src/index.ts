/** @pmm/testkit: helpers for tests only. */
export { freePort, waitForPort } from './ports';
export { stopAll, stopProcess } from './processes';
export { privateRedis, type PrivateRedis } from './private-redis';
export { until } from './until';
