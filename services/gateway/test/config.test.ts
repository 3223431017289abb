import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SIGN_PATH_SETTINGS } from '@pmm/core';
import { GATEWAY_SETTINGS, loadGatewayConfig, describeGatewayConfig } from '@pmm/gateway';

const load = (env: Record<string, string>) => loadGatewayConfig({ env, file: {} });

describe('gateway config', () => {
  it('default: every setting has its documented default; only INTERNAL_TOKEN is required', () => {
    const c = load({ INTERNAL_TOKEN: 'a-long-internal-token' });
    expect(c).toEqual({
      port: 8080,
      host: '127.0.0.1',
      opsPort: 9080,
      opsHost: '127.0.0.1',
      opsAllowedHosts: [],
      opsToken: undefined,
      consoleMaxViewers: 20,
      redisUrl: 'redis://127.0.0.1:6379',
      // Empty REDIS_RECORDS_URL: one server holds both roles.
      redisRecordsUrl: 'redis://127.0.0.1:6379',
      redisUsername: '',
      redisPassword: undefined,
      redisSentinelUsername: '',
      redisSentinelPassword: undefined,
      redisKeyPrefix: 'pmm',
      signerUrl: 'http://127.0.0.1:8081',
      signDeadlineMs: 400,
      signerMaxInFlight: 64,
      internalToken: 'a-long-internal-token',
      servedChains: [8453, 56, 4663],
      corsOrigins: [],
      requestTimeoutMs: 10_000,
      secretsDir: '',
      signBodyLimit: 16_384,
      defaultRateLimit: 600,
      defaultRateWindowSeconds: 60,
      bookCacheMs: 500,
      configWaitSeconds: 0,
      keyCacheMs: 500,
      authFailureLimit: 30,
      trustedProxies: [],
      streamsPerKey: 10,
      streamHeartbeatMs: 15_000,
      streamLeaseMs: 15_000,
      devApiKey: undefined,
      devApiKeyWhitelist: [],
      logLevel: 'info',
    });
  });

  it("behavior: INTERNAL_TOKEN is core's one definition, shared with the signer", () => {
    expect(GATEWAY_SETTINGS.internalToken).toBe(SIGN_PATH_SETTINGS.internalToken);
  });

  it("behavior: REDIS_USERNAME and the password from the service's secrets folder make the Redis URL it connects with", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-redis-secrets-'));
    writeFileSync(path.join(dir, 'redis_password'), 'the-gateway-redis-password\n');
    const c = load({
      INTERNAL_TOKEN: 'a-long-internal-token',
      REDIS_URL: 'redis://redis:6379',
      REDIS_USERNAME: 'gateway',
      SECRETS_DIR: dir,
    });
    expect(c.redisUrl).toBe('redis://gateway:the-gateway-redis-password@redis:6379');
    rmSync(dir, { recursive: true, force: true });
  });

  it('error: a missing INTERNAL_TOKEN names the setting', () => {
    expect(() => load({})).toThrow(/^INTERNAL_TOKEN \(internalToken\): required/);
  });

  it('behavior: lists and numbers are parsed from the environment', () => {
    const c = load({
      INTERNAL_TOKEN: 'a-long-internal-token',
      SERVED_CHAINS: '56, 8453',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      DEV_API_KEY: 'dev-key-0123456789',
      DEV_API_KEY_WHITELIST: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      BOOK_CACHE_MS: '1000',
    });
    expect(c.servedChains).toEqual([56, 8453]);
    expect(c.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(c.devApiKeyWhitelist).toEqual(['0x70997970c51812dc3a010c7d01b50e0d17dc79c8']);
    expect(c.bookCacheMs).toBe(1000);
  });

  it.each([
    [{ BOOK_CACHE_MS: '1001' }, /^BOOK_CACHE_MS \(bookCacheMs\): must be an integer in 0..1000/],
    [{ KEY_CACHE_MS: '5000' }, /^KEY_CACHE_MS/],
    [{ SERVED_CHAINS: '8453,1' }, /^SERVED_CHAINS \(servedChains\): chain 1 is not in the chain registry/],
    // The signer's rule (one definition): an empty or duplicated list used to pass here.
    [{ SERVED_CHAINS: ',' }, /^SERVED_CHAINS \(servedChains\): must be a non-empty/],
    [{ SERVED_CHAINS: '56,56' }, /^SERVED_CHAINS \(servedChains\): lists a chain twice/],
    [{ SIGNER_URL: 'ftp://x' }, /^SIGNER_URL/],
    [{ DEV_API_KEY_WHITELIST: 'nope' }, /^DEV_API_KEY_WHITELIST/],
    [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL/],
    [{ STREAM_HEARTBEAT_MS: '15001' }, /^STREAM_HEARTBEAT_MS \(streamHeartbeatMs\): must be an integer in 100..15000/],
    [{ STREAMS_PER_KEY: '0' }, /^STREAMS_PER_KEY/],
    [{ INTERNAL_TOKEN: 'short' }, /^INTERNAL_TOKEN \(internalToken\): must be at least 16 characters$/],
    [{ DEV_API_KEY: 'dev' }, /^DEV_API_KEY \(devApiKey\): must be at least 16 characters$/],
    [
      { TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' },
      /^TRUSTED_PROXIES \(trustedProxies\): not an IP address or CIDR range: "proxy.local"/,
    ],
  ])('error: %j is rejected with the setting named', (env, message) => {
    expect(() => load({ INTERNAL_TOKEN: 'a-long-internal-token', ...env })).toThrow(message);
  });

  it('behavior: the help lists every setting and never a secret value', () => {
    const lines = describeGatewayConfig();
    expect(lines.some((l) => l.startsWith('INTERNAL_TOKEN (internalToken; secret)'))).toBe(true);
    expect(lines.some((l) => l.startsWith('REQUEST_TIMEOUT_MS (requestTimeoutMs; default 10000)'))).toBe(true);
    expect(lines).toHaveLength(36);
  });
});
