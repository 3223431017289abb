/**
 * ioredis factory. One place decides how each kind of connection behaves:
 * - `command`: fails fast while disconnected (no offline queue), so a request gets a 503
 *   instead of hanging; reconnects on its own.
 * - `subscriber`: pub/sub only; ioredis resubscribes after a reconnect; no ready check.
 * - `worker`: BullMQ workers need `maxRetriesPerRequest: null` (blocking commands).
 * URLs: `redis://` / `rediss://` (single node),
 * `redis-sentinel://[user:password@]h1:p1,h2:p2/<master>[?sentinelUsername=…&sentinelPassword=…]`,
 * and `redis-cluster://[user:password@]h1:p1,h2:p2`; `rediss-sentinel://` and `rediss-cluster://`
 * connect with TLS (Sentinel: to the sentinels and to the data nodes). The user name and password
 * are the data nodes' (a Redis ACL user; managed Redis services need both); sentinels that ask
 * for a password of their own (Sentinel's `requirepass`) get `sentinelPassword`, and
 * `sentinelUsername` when they have ACL users. Sentinel clients follow a fail-over at once.
 * Every client gets an `error` listener: an unhandled one would crash the process on the first
 * disconnect.
 */
import Redis, { Cluster, RedisOptions } from 'ioredis';
import type { Logger } from '../service/logger';

export type RedisRole = 'command' | 'subscriber' | 'worker';

/**
 * `redis-cluster://` and `redis-sentinel://` URLs (and their `rediss-` TLS forms): multi-host
 * ones are not valid WHATWG URLs (comma-separated host:port), so they are parsed by hand:
 * [scheme, user, password, hosts, master, query].
 */
const MULTI_HOST_URL =
  /^(rediss?-cluster|rediss?-sentinel):\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/@?]+)(?:\/([^?]*))?(?:\?(.*))?$/;
/** The query parameters a Sentinel URL takes: the sentinels' own credentials. */
const SENTINEL_PARAMETERS = ['sentinelUsername', 'sentinelPassword'] as const;
export type RedisClient = Redis | Cluster;

/** A Sentinel or Cluster URL, parsed. */
export interface MultiHostUrl {
  kind: 'sentinel' | 'cluster';
  tls: boolean;
  username?: string;
  password?: string;
  hosts: { host: string; port: number }[];
  /** The Sentinel master name (never guessed: a Sentinel URL without one is refused). */
  master?: string;
  /** The sentinels' own user and password (Sentinel only), when they ask for them. */
  sentinelUsername?: string;
  sentinelPassword?: string;
}

/** The sentinels' credentials from a Sentinel URL's query; refuses any other parameter, and one given twice. */
function sentinelCredentials(
  scheme: string,
  query: string,
): Pick<MultiHostUrl, 'sentinelUsername' | 'sentinelPassword'> {
  const out: Pick<MultiHostUrl, 'sentinelUsername' | 'sentinelPassword'> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const known = SENTINEL_PARAMETERS.find((p) => p === name);
    // The name only: a misspelt parameter may still carry a password.
    if (!known)
      throw new Error(
        `a ${scheme}:// URL takes only ${SENTINEL_PARAMETERS.join(' and ')} as parameters, not "${name}"`,
      );
    if (out[known] !== undefined) throw new Error(`a ${scheme}:// URL gives ${name} twice`);
    out[known] = value;
  }
  if (out.sentinelUsername !== undefined && out.sentinelPassword === undefined)
    throw new Error(`a ${scheme}:// URL with sentinelUsername needs sentinelPassword`);
  return out;
}

/**
 * Parses a Sentinel or Cluster URL; undefined for any other URL. Throws (a message fit for a
 * configuration error, without the credentials) when a Sentinel URL names no master or a host
 * is not host:port.
 */
export function parseMultiHostUrl(url: string): MultiHostUrl | undefined {
  const m = MULTI_HOST_URL.exec(url);
  if (!m) return undefined;
  const [, scheme, user, password, hostList, master, query] = m;
  const kind = scheme!.endsWith('sentinel') ? 'sentinel' : 'cluster';
  const hosts = hostList!.split(',').map((hp) => {
    const hm = /^([^:,]+)(?::(\d{1,5}))?$/.exec(hp);
    if (!hm) throw new Error(`"${hp}" is not host:port`);
    return { host: hm[1]!, port: Number(hm[2] ?? (kind === 'sentinel' ? 26379 : 6379)) };
  });
  if (kind === 'sentinel' && !master)
    throw new Error(
      `a ${scheme}:// URL must end with /<master name>, the name the sentinels monitor (e.g. ${scheme}://host:26379/pmm)`,
    );
  if (kind === 'cluster' && master)
    throw new Error(`a ${scheme}:// URL has no path (a Cluster has no database or master name)`);
  if (kind === 'cluster' && query !== undefined) throw new Error(`a ${scheme}:// URL takes no parameters`);
  return {
    kind,
    tls: scheme!.startsWith('rediss'),
    ...(user ? { username: decodeURIComponent(user) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    hosts,
    ...(master ? { master: decodeURIComponent(master) } : {}),
    ...(kind === 'sentinel' && query !== undefined ? sentinelCredentials(scheme!, query) : {}),
  };
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
    /** A command connection's limit per command, ms (default 2,000): longer for a WAIT that may take longer. */
    commandTimeoutMs?: number;
  },
): RedisClient {
  const role = opts.role ?? 'command';
  const options = {
    ...roleOptions(role),
    ...(role === 'command' && opts.commandTimeoutMs !== undefined ? { commandTimeout: opts.commandTimeoutMs } : {}),
    connectionName: opts.name,
  };
  let client: RedisClient;
  const multi = parseMultiHostUrl(url);
  const credentials = { username: multi?.username, password: multi?.password };
  if (multi?.kind === 'cluster') {
    client = new Cluster(multi.hosts, {
      redisOptions: { ...options, ...credentials, ...(multi.tls ? { tls: {} } : {}) },
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      enableAutoPipelining: options.enableAutoPipelining,
    });
  } else if (multi?.kind === 'sentinel') {
    client = new Redis({
      ...options,
      ...credentials,
      sentinels: multi.hosts,
      name: multi.master!,
      // The sentinels' own credentials, used for them only (the data nodes get `credentials`).
      sentinelUsername: multi.sentinelUsername,
      sentinelPassword: multi.sentinelPassword,
      // TLS to the sentinels and to the data nodes they name.
      ...(multi.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
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

/** How long closeRedis waits for QUIT's answer before it drops the connection anyway. */
const QUIT_WAIT_MS = 2_000;

/**
 * Closes a client for good: QUIT (what was sent before it is answered), then disconnect.
 * - The disconnect is what a Sentinel client needs: with `failoverDetector`, ioredis's quit()
 *   leaves the detector's subscriptions to the sentinels open, and reconnecting when a sentinel
 *   goes, so the process never exits on its own (ioredis issue #1362; the fix, pull request
 *   #2198, is in no release up to 6.0.0).
 * - QUIT is awaited at most `QUIT_WAIT_MS`: a Redis that accepts the connection but does not
 *   answer (stopped, swapping, a fail-over half done) would otherwise hold a service's shutdown
 *   for ever. The services call this after their server has drained, so every write a request
 *   waited on has been answered already; only the QUIT itself is dropped.
 * - When QUIT fails (Redis is gone), disconnect still releases everything.
 */
export async function closeRedis(
  client: RedisClient,
  // An object, not a bare number: `clients.map(closeRedis)` passed each client's index as the
  // wait (0, 1, 2 ms) and dropped the QUIT at once; the type checker now refuses that call.
  { waitMs = QUIT_WAIT_MS }: { waitMs?: number } = {},
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([client.quit(), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
  } catch {
    // Nothing to flush to a Redis that is gone.
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
