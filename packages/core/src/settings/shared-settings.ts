/**
 * Settings every service declares the same way, declared once: spread into each service's
 * settings object (`...SHARED_SETTINGS`), so their names, defaults and documentation agree.
 */
import { ConfigError, settings, type Setting } from './config';
import { parseChainDeployments, type ChainDeployments } from '../chain/chain-deployment';
import { DEFAULT_KEY_PREFIX } from '../redis/redis-keys';
import { parseMultiHostUrl } from '../redis/redis-client';
import {
  DURABILITY_MODES,
  resolveDurabilityMode,
  type DurabilityPolicy,
  type DurabilitySetting,
} from '../redis/durable-writes';
import { findChain } from '@pmm/protocol';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

const redisUrlSetting = settings.url(
  'REDIS_URL',
  'Redis: redis:// or rediss:// (single node), redis-sentinel://[user:password@]host:port,…/<master>[?sentinelUsername=…&sentinelPassword=…] (the master name is required; the query, the sentinels’ own credentials, better as REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD), redis-cluster://[user:password@]host:port,…; rediss-sentinel:// and rediss-cluster:// for TLS. ' +
    'Better without credentials: REDIS_USERNAME and REDIS_PASSWORD (a secret, so REDIS_PASSWORD_FILE) replace the ones it carries.',
  'redis://127.0.0.1:6379',
  // Sentinel and Cluster URLs are parsed by parseMultiHostUrl, never as one WHATWG URL.
  ['redis', 'rediss'],
);

/**
 * How a process reaches Redis: the URL, the user and password it connects as, and the sentinels'
 * own credentials. Every service and operator command reads these (redisConnectionUrl makes the
 * one URL they connect with).
 */
/** A Redis URL in any of createRedis's forms: several sentinels or cluster nodes (host:port,host:port) are no WHATWG URL. */
function parseRedisUrl(raw: unknown): string {
  if (typeof raw !== 'string') return redisUrlSetting.parse(raw);
  let multi;
  try {
    multi = parseMultiHostUrl(raw);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return multi ? raw : redisUrlSetting.parse(raw);
}

export const REDIS_CONNECTION_SETTINGS = {
  redisUrl: { ...redisUrlSetting, parse: parseRedisUrl } satisfies Setting<string>,
  // The records apart from what can be rebuilt (docs/decisions/0026-only-the-records-pay-for-durability-two-redis-roles.md):
  // the same forms as REDIS_URL, the same user and password on both servers.
  redisRecordsUrl: {
    ...settings.string(
      'REDIS_RECORDS_URL',
      'Redis of the records (the audit trail and daily quota counts, integrators, API keys, halts, the maker’s ledger): the forms of REDIS_URL, with the same user and password (REDIS_USERNAME, REDIS_PASSWORD). REDIS_DURABILITY applies to it. Empty: REDIS_URL holds everything. With it set, REDIS_URL holds only what can be rebuilt (books, pair registries, mid history, rate-limit counters, price-stream slots, the indexers’ queues), which needs no fsync and no replica.',
      '',
    ),
    parse: (raw: unknown) => (raw === '' ? '' : parseRedisUrl(raw)),
  } satisfies Setting<string>,
  // The Redis user and its password apart from the URL, so that the password can come from a
  // secrets file (REDIS_PASSWORD_FILE, SECRETS_DIR) like every other secret: docker-compose.yml
  // and the Helm chart give each process its own user (packages/core/src/redis/redis-acl.ts) this way.
  redisUsername: settings.string(
    'REDIS_USERNAME',
    'Redis ACL user to connect as; needs REDIS_PASSWORD, and the two replace the credentials in REDIS_URL. Empty: the user in REDIS_URL, else the default user.',
    '',
  ),
  redisPassword: settings.optionalSecret(
    'REDIS_PASSWORD',
    "Password of the Redis user (or REDIS_PASSWORD_FILE, or redis_password in SECRETS_DIR); replaces the password in REDIS_URL. docker-compose.yml reads each service's from its own secrets folder, the Helm chart from a key of redis.existingSecret.",
  ),
  // Sentinels with `requirepass` (or ACL users) of their own, as managed and charted Sentinel
  // deployments often run them: a secret like the data password, so apart from the URL too.
  redisSentinelUsername: settings.string(
    'REDIS_SENTINEL_USERNAME',
    "User to authenticate to the sentinels as, when they have ACL users; needs REDIS_SENTINEL_PASSWORD. Empty: the sentinels' default user.",
    '',
  ),
  redisSentinelPassword: settings.optionalSecret(
    'REDIS_SENTINEL_PASSWORD',
    "Password of the sentinels themselves (Sentinel's requirepass), when they ask for one (or REDIS_SENTINEL_PASSWORD_FILE, or redis_sentinel_password in SECRETS_DIR); only with a redis-sentinel:// or rediss-sentinel:// REDIS_URL or REDIS_RECORDS_URL. The data nodes' password stays REDIS_PASSWORD. The Helm chart reads it from the key redis.sentinelPasswordKey of redis.existingSecret.",
  ),
};

export const SHARED_SETTINGS = {
  ...REDIS_CONNECTION_SETTINGS,
  redisKeyPrefix: settings.string(
    'REDIS_KEY_PREFIX',
    'Prefix of every Redis key, channel and queue.',
    DEFAULT_KEY_PREFIX,
  ),
  logLevel: settings.oneOf('LOG_LEVEL', 'error | warn | info | debug.', 'info', LOG_LEVELS),
  // The next two govern loading itself (the loader reads them from the environment before any
  // other setting, so a config file cannot set them); declared here so that they are documented
  // and validated like the rest.
  secretsDir: {
    ...settings.string(
      'SECRETS_DIR',
      'Folder of secret files named after the setting in lower case (e.g. internal_token), read for a secret set neither as X nor X_FILE. ' +
        "docker-compose.yml sets it to /run/secrets/pmm in every service, where that service's own secrets folder is mounted (filled by the devnet profile, or your folder in production).",
      '',
    ),
    envOnly: true,
  },
  configWaitSeconds: {
    ...settings.int(
      'CONFIG_WAIT_SECONDS',
      'At start, wait up to this long for CONFIG_FILE to appear (the compose devnet profile writes it while the services start).',
      0,
      [0, 3_600],
    ),
    envOnly: true,
  },
};

/** What a process's Redis connections are made from (REDIS_CONNECTION_SETTINGS, loaded). */
export interface RedisConnectionConfig {
  redisUrl: string;
  /** Empty: REDIS_URL holds the records too. */
  redisRecordsUrl?: string;
  redisUsername: string;
  redisPassword?: string;
  redisSentinelUsername?: string;
  redisSentinelPassword?: string;
}

/** The two URLs a process connects with; `redisRecordsUrl` is `redisUrl` itself when one server holds both roles. */
export interface RedisRoleUrls {
  /** What can be rebuilt (and everything, when no records URL is set). */
  redisUrl: string;
  /** The records. */
  redisRecordsUrl: string;
}

/**
 * The Redis URLs a process connects with: REDIS_URL and REDIS_RECORDS_URL (REDIS_URL when
 * empty), each with REDIS_USERNAME and REDIS_PASSWORD in place of the credentials it carries
 * when REDIS_PASSWORD is set (any scheme, multi-host ones included: the credentials sit between
 * `://` and the first host), and a Sentinel URL with REDIS_SENTINEL_USERNAME and
 * REDIS_SENTINEL_PASSWORD in place of the sentinel credentials of its query when
 * REDIS_SENTINEL_PASSWORD is set. A user name without its password, and sentinel credentials
 * when neither URL names sentinels, are configuration errors.
 */
export function redisConnectionUrls(config: RedisConnectionConfig): RedisRoleUrls {
  if (config.redisPassword === undefined && config.redisUsername !== '')
    // A user name alone would connect as whoever the URL names, not as the user the operator set.
    throw new ConfigError('REDIS_USERNAME (redisUsername): needs REDIS_PASSWORD (or REDIS_PASSWORD_FILE)');
  const sentinelUsername = config.redisSentinelUsername ?? '';
  if (config.redisSentinelPassword === undefined && sentinelUsername !== '')
    throw new ConfigError(
      'REDIS_SENTINEL_USERNAME (redisSentinelUsername): needs REDIS_SENTINEL_PASSWORD (or REDIS_SENTINEL_PASSWORD_FILE)',
    );
  const raw = [config.redisUrl, config.redisRecordsUrl || config.redisUrl];
  if (config.redisSentinelPassword !== undefined && !raw.some((url) => parseMultiHostUrl(url)?.kind === 'sentinel'))
    throw new ConfigError(
      'REDIS_SENTINEL_PASSWORD (redisSentinelPassword): only for a redis-sentinel:// or rediss-sentinel:// REDIS_URL or REDIS_RECORDS_URL',
    );
  const [redisUrl, redisRecordsUrl] = raw.map((url) => withCredentials(url, config));
  return { redisUrl: redisUrl!, redisRecordsUrl: redisRecordsUrl! };
}

function withCredentials(raw: string, config: RedisConnectionConfig): string {
  let url = raw;
  if (config.redisPassword !== undefined) {
    const credentials = `${encodeURIComponent(config.redisUsername)}:${encodeURIComponent(config.redisPassword)}@`;
    url = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)(?:[^/@]*@)?/i, `$1${credentials}`);
  }
  if (config.redisSentinelPassword === undefined || parseMultiHostUrl(url)?.kind !== 'sentinel') return url;
  // The query starts after the master name: a password in the authority may hold a bare `?`.
  const queryAt = url.indexOf('?', url.indexOf('/', url.indexOf('://') + 3));
  const base = queryAt === -1 ? url : url.slice(0, queryAt);
  const params = new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1));
  params.delete('sentinelUsername');
  params.delete('sentinelPassword');
  const sentinelUsername = config.redisSentinelUsername ?? '';
  if (sentinelUsername !== '') params.set('sentinelUsername', sentinelUsername);
  params.set('sentinelPassword', config.redisSentinelPassword);
  return `${base}?${params.toString()}`;
}

/**
 * `CHAINS` (config-file key `chains`): the chain deployments, `{ "<id>": { chainId, rpcUrl?,
 * wsUrl?, contracts } }`, checked by parseChainDeployments. Required unless a `fallback` is
 * given; each program that reads it says in `description` what it uses it for.
 */
export function chainsSetting(description: string, fallback?: ChainDeployments): Setting<ChainDeployments> {
  return settings.json('CHAINS', description, fallback, (value) => {
    try {
      return parseChainDeployments(value);
    } catch (err) {
      throw new ConfigError(err instanceof Error ? err.message : 'invalid');
    }
  });
}

/** `SERVED_CHAINS`: a comma-separated list (or JSON array) of ids from the chain registry, each once. */
function parseServedChains(raw: unknown): number[] {
  const fail = (reason: string): never => {
    throw new ConfigError(reason);
  };
  const items = Array.isArray(raw)
    ? raw.map(String)
    : typeof raw === 'string'
      ? raw.split(',').map((s) => s.trim())
      : fail('must be a list of chain ids');
  if (items.length === 0 || items.some((s) => s === '')) fail('must be a non-empty comma-separated list of chain ids');
  const ids = items.map((s) => (/^[0-9]+$/.test(s) ? Number(s) : fail(`"${s}" is not a chain id`)));
  for (const id of ids) if (!findChain(id)) fail(`chain ${id} is not in the chain registry`);
  if (new Set(ids).size !== ids.length) fail('lists a chain twice');
  return ids;
}

/**
 * Settings the gateway and the signer must agree on (the gateway checks what the signer
 * would refuse): both spread these into their settings, so the names, defaults, bounds and
 * validation are one (docs/decisions/0010-body-size-and-time-limits.md).
 */
export const SIGN_PATH_SETTINGS = {
  internalToken: settings.secret(
    'INTERNAL_TOKEN',
    'Shared secret between the gateway and the signer (X-Internal-Token), at least 16 characters; give both the same (or INTERNAL_TOKEN_FILE). Only these two services get it.',
    16,
  ),
  servedChains: {
    env: 'SERVED_CHAINS',
    description:
      'Chains served, comma-separated: ids from the chain registry, each once (the signer needs a signing key for each). Default "8453,56,4663".',
    default: [8453, 56, 4663],
    parse: parseServedChains,
  } satisfies Setting<number[]>,
  requestTimeoutMs: settings.int(
    'REQUEST_TIMEOUT_MS',
    'Request timeout: headers must arrive within it and a sign body within it after them (else 408); at the gateway an answer not ready within it after the request arrived is 503, and Node cuts a whole request at this plus 5 s (408).',
    10_000,
    [100, 120_000],
  ),
  signBodyLimit: settings.int('SIGN_BODY_LIMIT', 'Largest sign request body in bytes; larger is 413.', 16 * 1024, [
    256,
    1024 * 1024,
  ]),
};

/**
 * How writes that must not be lost are confirmed: the signer's audit records and the key
 * CLI's integrators, keys and whitelists (durable-writes.ts; docs/decisions/0020-durable-writes.md).
 */
export const DURABLE_WRITE_SETTINGS = {
  redisDurability: settings.oneOf(
    'REDIS_DURABILITY',
    'How an audit record (and a key CLI write, a halt) is confirmed durable before the signature (or the key) is given out: ' +
      'fsync (every master answers only after fsyncing its append-only file: appendonly yes, checked with INFO, and appendfsync always, set by the deployment), ' +
      'replica (WAIT for REDIS_DURABLE_REPLICAS replica acknowledgements), none (nothing confirmed: development and tests only), ' +
      'or auto: replica for Sentinel and Cluster URLs (redis-sentinel://, redis-cluster:// and their rediss- forms), fsync otherwise. It applies to the records’ server (REDIS_RECORDS_URL, else REDIS_URL). Unconfirmed: the sign answer is 503. Default auto.',
    'auto',
    DURABILITY_MODES,
  ),
  redisDurableReplicas: settings.int(
    'REDIS_DURABLE_REPLICAS',
    'Replica acknowledgements a write needs in replica mode (WAIT): set it to the number of replicas of each primary (a replica that did not acknowledge may be the one a fail-over promotes). Default 1.',
    1,
    [1, 16],
  ),
  redisDurableWaitMs: settings.int(
    'REDIS_DURABLE_WAIT_MS',
    'How long a write waits for those acknowledgements (WAIT timeout) before it counts as not durable (the sign answer is then 503). Default 500.',
    500,
    [1, 10_000],
  ),
};

/** The loaded {@link DURABLE_WRITE_SETTINGS}. */
export interface DurableWriteConfig {
  redisDurability: DurabilitySetting;
  redisDurableReplicas: number;
  redisDurableWaitMs: number;
}

/** The policy the {@link DURABLE_WRITE_SETTINGS} describe for the records' server at `recordsUrl`. */
export function durabilityPolicy(config: DurableWriteConfig, recordsUrl: string): DurabilityPolicy {
  return {
    mode: resolveDurabilityMode(config.redisDurability, recordsUrl),
    replicas: config.redisDurableReplicas,
    waitTimeoutMs: config.redisDurableWaitMs,
  };
}

/**
 * Who may read a service's operator endpoints (the gateway's operator port; the health and metrics
 * routes of the signer and the indexers), checked by http/operator-guard.ts.
 */
export const OPERATOR_ENDPOINT_SETTINGS = {
  opsAllowedHosts: settings.list(
    'OPS_ALLOWED_HOSTS',
    'Host names (comma-separated) the operator endpoints (/healthz, /readyz, /metrics; the console on the gateway) answer besides IP addresses and "localhost": any other Host header is 400, so that a web page cannot read them by DNS rebinding. Add the names a scraper or tunnel uses.',
    [],
  ),
  opsToken: settings.optionalSecret(
    'OPS_TOKEN',
    'Optional bearer token for the operator endpoints: when set, /metrics (and the console on the gateway) need "Authorization: Bearer <token>"; /healthz and /readyz stay open for probes. At least 16 characters.',
    16,
  ),
};
