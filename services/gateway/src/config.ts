/**
 * The gateway's declared configuration: every setting once, with its environment name,
 * default and meaning. Read from `CONFIG_FILE` (JSON, keys = the names below) and overridden
 * by the environment; secrets also from `<ENV>_FILE`. Handlers never read `process.env`.
 */
import {
  ConfigError,
  describeConfig,
  loadConfig,
  OPERATOR_ENDPOINT_SETTINGS,
  redisConnectionUrls,
  settings,
  type ConfigSources,
  type HttpTimeouts,
  SHARED_SETTINGS,
  SIGN_PATH_SETTINGS,
} from '@pmm/core';
import { isAddress } from '@pmm/protocol';
import { proxyList } from './keys/auth-failures';

function addressList(list: string[]): string[] {
  for (const a of list) if (!isAddress(a)) throw new ConfigError('must be a comma-separated list of 0x addresses');
  return list.map((a) => a.toLowerCase());
}

function proxyAddresses(entries: string[]): string[] {
  try {
    proxyList(entries);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return entries;
}

/** Every setting of the gateway (see `describeGatewayConfig` for the one-line help). */
export const GATEWAY_SETTINGS = {
  ...SHARED_SETTINGS,
  ...SIGN_PATH_SETTINGS,
  ...OPERATOR_ENDPOINT_SETTINGS,
  port: settings.int('PORT', 'Public HTTP port (the API and /healthz).', 8080, [0, 65535]),
  host: settings.string('HOST', 'Interface to bind (0.0.0.0 in containers).', '127.0.0.1'),
  opsPort: settings.int(
    'OPS_PORT',
    'Operator port: /healthz, /readyz, /metrics and the operator console /console (not for the public).',
    9080,
    [0, 65535],
  ),
  opsHost: settings.string('OPS_HOST', 'Interface of the operator port.', '127.0.0.1'),
  consoleMaxViewers: settings.int(
    'CONSOLE_MAX_VIEWERS',
    'Open operator-console event streams per gateway replica; more is 429.',
    20,
    [1, 10_000],
  ),
  signerUrl: settings.url('SIGNER_URL', 'Base URL of the internal signer.', 'http://127.0.0.1:8081', ['http', 'https']),
  // docs/decisions/0071-past-capacity-a-fast-no.md
  signDeadlineMs: settings.int(
    'SIGN_DEADLINE_MS',
    'Deadline of a sign (POST /v2/swap/sign, /v1/swap/sign), counted from when its request head arrived: a step that can no longer end in time (the key check, the rate limit, the wait for the signer, and at the signer its firm quote and the audit record) is not started, and a sign not answered by then is 503 SERVICE_UNAVAILABLE with Retry-After. What is left of it travels to the signer with the request. Default 400 (under the 500 ms some aggregators allow, with room for the way back to them).',
    400,
    [50, 10_000],
  ),
  signerMaxInFlight: settings.int(
    'SIGNER_MAX_IN_FLIGHT',
    "Sign requests this gateway replica has at the signer at once; past it a sign is 503 SERVICE_UNAVAILABLE at once (Retry-After) instead of a longer wait. At most the 512 connections of the pool to the signer. Size: the signs per second wanted × a sign's time at the signer under load, and under SIGN_DEADLINE_MS × the signs per second the signers can do. Default 64.",
    64,
    [1, 512],
  ),
  corsOrigins: settings.list(
    'CORS_ORIGINS',
    'Browser origins allowed by CORS, comma-separated; "*" for any; empty disables CORS.',
    [],
  ),
  defaultRateLimit: settings.int(
    'DEFAULT_RATE_LIMIT',
    'Requests per window for an integrator whose record sets 0.',
    600,
    [1, 1_000_000_000],
  ),
  defaultRateWindowSeconds: settings.int(
    'DEFAULT_RATE_WINDOW_SECONDS',
    'Window of the default rate limit, seconds.',
    60,
    [1, 86_400],
  ),
  bookCacheMs: settings.int(
    'BOOK_CACHE_MS',
    'In-process cache life of a book; a deleted book is served at most this long.',
    500,
    [0, 1_000],
  ),
  authFailureLimit: settings.int(
    'AUTH_FAILURE_LIMIT',
    "Failed authentications per client (an IPv4 address, an IPv6 /64) and minute, per gateway replica, after which that client's further failed attempts are 429 RATE_LIMITED with Retry-After until the minute ends (a valid key always passes); 0: no limit.",
    30,
    [0, 1_000_000],
  ),
  trustedProxies: settings.list(
    'TRUSTED_PROXIES',
    'Addresses or CIDR ranges (comma-separated) of the reverse proxies in front of the gateway: only behind one of them is X-Forwarded-For used for the client address (the right-most address that is not a trusted proxy). Empty: the socket address, X-Forwarded-For ignored.',
    [],
    proxyAddresses,
  ),
  keyCacheMs: settings.int(
    'KEY_CACHE_MS',
    'In-process cache life of an API key lookup; a revocation takes effect within it.',
    500,
    [0, 1_000],
  ),
  streamsPerKey: settings.int(
    'STREAMS_PER_KEY',
    'Open /v2/price/stream connections per API key, counted across gateway replicas; more is 429.',
    10,
    [1, 100_000],
  ),
  streamHeartbeatMs: settings.int(
    'STREAM_HEARTBEAT_MS',
    'Interval of the comment line that keeps an idle stream open through proxies.',
    15_000,
    [100, 15_000],
  ),
  streamLeaseMs: settings.int(
    'STREAM_LEASE_MS',
    "Life of a stream's slot in Redis, renewed every third of it; a dead replica's slots free after it.",
    15_000,
    [300, 300_000],
  ),
  devApiKey: settings.optionalSecret(
    'DEV_API_KEY',
    'Development only: an API key seeded at start (integrator "dev"), at least 16 characters.',
    16,
  ),
  devApiKeyWhitelist: settings.list(
    'DEV_API_KEY_WHITELIST',
    'Addresses whitelisted for the development key, comma-separated.',
    [],
    addressList,
  ),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

/** Loads and validates the gateway's settings; throws ConfigError naming the bad setting. */
export function loadGatewayConfig(sources: ConfigSources = {}) {
  const c = loadConfig(GATEWAY_SETTINGS, sources);
  return { ...c, ...redisConnectionUrls(c) };
}

/** One line per setting, for `--help` and the README. */
export function describeGatewayConfig(): string[] {
  return describeConfig(GATEWAY_SETTINGS);
}

/**
 * Node's limits on reading a public request, from REQUEST_TIMEOUT_MS: the headers must arrive
 * within it (408); the whole request gets 5 s more, so that the gateway's own timer (armed
 * when the headers are in: 408 while the body is still arriving, else 503) answers first.
 */
export function gatewayTimeouts(config: Pick<GatewayConfig, 'requestTimeoutMs'>): HttpTimeouts {
  return { headersMs: config.requestTimeoutMs, requestMs: config.requestTimeoutMs + 5_000, keepAliveMs: 5_000 };
}
