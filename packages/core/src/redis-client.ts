/**
 * ioredis factory. One place decides how each kind of connection behaves:
 * - `command`: fails fast while disconnected (no offline queue), so a request gets a 503
 *   instead of hanging; reconnects on its own.
 * - `subscriber`: pub/sub only; ioredis resubscribes after a reconnect; no ready check.
 * - `worker`: BullMQ workers need `maxRetriesPerRequest: null` (blocking commands).
 * URLs: `redis://` / `rediss://` (single node), `redis-sentinel://h1:p1,h2:p2/<master>`, and
 * `redis-cluster://h1:p1,h2:p2` (Sentinel clients follow a fail-over at once). Every client gets an `error` listener: an unhandled one would
 * crash the process on the first disconnect.
 */
import Redis, { Cluster, RedisOptions } from 'ioredis';
import type { Logger } from './logger';

export type RedisRole = 'command' | 'subscriber' | 'worker';

/**
 * `redis-cluster://` and `redis-sentinel://` URLs: multi-host ones are not valid WHATWG URLs
 * (comma-separated host:port), so they are parsed by hand: [scheme, password, hosts, master].
 */
export const MULTI_HOST_URL = /^(redis-cluster|redis-sentinel):\/\/(?:[^:@/]*:([^@/]*)@)?([^/]+)(?:\/(.*))?$/;
export type RedisClient = Redis | Cluster;

function hostsOf(list: string): { host: string; port: number }[] {
  return list.split(',').map((hp) => {
    const [host, port] = hp.split(':');
    return { host: host ?? '127.0.0.1', port: Number(port ?? 6379) };
  });
}

function roleOptions(role: RedisRole): RedisOptions {
  const base: RedisOptions = {
    connectTimeout: 2_000,
    // Capped exponential backoff; never give up.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
  };
  if (role === 'worker') return { ...base, maxRetriesPerRequest: null };
  // No ready check (INFO) on subscribers: after a reconnect it can race the automatic
  // resubscription and fail with "only (P|S)SUBSCRIBE ... allowed in this context".
  if (role === 'subscriber') return { ...base, maxRetriesPerRequest: null, enableReadyCheck: false };
  return { ...base, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000 };
}

export function createRedis(
  url: string,
  opts: {
    role?: RedisRole;
    name: string;
    logger?: Logger;
  },
): RedisClient {
  const role = opts.role ?? 'command';
  const options = {
    ...roleOptions(role),
    connectionName: opts.name,
  };
  let client: RedisClient;
  const multi = MULTI_HOST_URL.exec(url);
  if (multi?.[1] === 'redis-cluster') {
    client = new Cluster(hostsOf(multi[3]!), {
      redisOptions: { ...options, password: multi[2] ? decodeURIComponent(multi[2]) : undefined },
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      enableAutoPipelining: options.enableAutoPipelining,
    });
  } else if (multi?.[1] === 'redis-sentinel') {
    client = new Redis({
      ...options,
      sentinels: hostsOf(multi[3]!),
      name: multi[4] || 'mymaster',
      password: multi[2] ? decodeURIComponent(multi[2]) : undefined,
      // Follow a fail-over at once: the sentinels' +switch-master closes the connection to the
      // demoted primary (without it, writes keep going there until it is told to replicate,
      // and are then discarded), and a READONLY answer (a primary turned replica) reconnects
      // to the primary the sentinels name. The failed command is not re-sent: the caller decides.
      failoverDetector: true,
      reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
    });
  } else {
    client = new Redis(url, options);
  }
  let healthy = true;
  client.on('error', (err: Error) => {
    // Log the first error of an outage only; ioredis retries on its own.
    if (healthy) opts.logger?.warn('redis error', { connection: opts.name, error: err.message });
    healthy = false;
  });
  client.on('ready', () => {
    if (!healthy) opts.logger?.info('redis reconnected', { connection: opts.name });
    healthy = true;
  });
  return client;
}

/**
 * Resolves once the client is connected (a fail-fast `command` client rejects commands
 * before that), or rejects after `timeoutMs`.
 */
export function redisReady(client: RedisClient, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
