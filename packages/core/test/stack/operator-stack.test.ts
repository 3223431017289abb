/**
 * operatorEnv: the operator commands beside a running `npm start` take its Redis and chains from
 * the stack file (`redis.url`, `configFile`, as scripts/start.mjs writes them); explicit settings win;
 * no file changes nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_STACK_FILE, describeRedis, operatorEnv } from '../../src';

const dir = mkdtempSync(path.join(tmpdir(), 'operator-stack-'));
const file = path.join(dir, 'stack.json');
writeFileSync(
  file,
  JSON.stringify({
    chains: {},
    redis: { url: 'redis://:s3cret@127.0.0.1:40123' },
    configFile: '/srv/stack/chains.json',
  }),
);

describe('operatorEnv', () => {
  it('behavior: with no settings, the Redis URL and chains file of the stack file; the source is named', () => {
    const { env, redisFrom } = operatorEnv('keys', { STACK_FILE: file });
    expect(env.REDIS_URL).toBe('redis://:s3cret@127.0.0.1:40123');
    expect(env.CONFIG_FILE).toBe('/srv/stack/chains.json');
    expect(redisFrom).toBe(path.relative(process.cwd(), file));
    // The password never reaches a message.
    expect(describeRedis(env.REDIS_URL!, redisFrom)).toBe(`Redis redis://***@127.0.0.1:40123 (from ${redisFrom})`);
    expect(describeRedis('redis-sentinel://a:b@s1:26379/pmm?sentinelPassword=s3cret-sentinel', 'REDIS_URL')).toBe(
      'Redis redis-sentinel://***@s1:26379/pmm?sentinelPassword=*** (from REDIS_URL)',
    );
  });

  it("behavior: a stack whose Redis has one user per role gives each command its own user's URL", () => {
    const roles = path.join(dir, 'roles.json');
    writeFileSync(
      roles,
      JSON.stringify({
        redis: {
          url: 'redis://:owner@127.0.0.1:40123',
          roles: { keys: 'redis://keys:k@127.0.0.1:40123', operator: 'redis://operator:o@127.0.0.1:40123' },
        },
      }),
    );
    expect(operatorEnv('keys', { STACK_FILE: roles }).env.REDIS_URL).toBe('redis://keys:k@127.0.0.1:40123');
    expect(operatorEnv('operator', { STACK_FILE: roles }).env.REDIS_URL).toBe('redis://operator:o@127.0.0.1:40123');
  });

  it("behavior: a stack with two Redis servers gives each command its own user's URL on each; an explicit REDIS_URL takes neither", () => {
    const twoServers = path.join(dir, 'two-servers.json');
    writeFileSync(
      twoServers,
      JSON.stringify({
        redis: {
          url: 'redis://admin:a@127.0.0.1:40123',
          recordsUrl: 'redis://admin:a@127.0.0.1:40124',
          roles: { risk: 'redis://risk:r@127.0.0.1:40123' },
          recordsRoles: { risk: 'redis://risk:r@127.0.0.1:40124' },
        },
      }),
    );
    const risk = operatorEnv('risk', { STACK_FILE: twoServers }).env;
    expect([risk.REDIS_URL, risk.REDIS_RECORDS_URL]).toEqual([
      'redis://risk:r@127.0.0.1:40123',
      'redis://risk:r@127.0.0.1:40124',
    ]);
    // No role of its own recorded: the administrator's URLs.
    const keys = operatorEnv('keys', { STACK_FILE: twoServers }).env;
    expect([keys.REDIS_URL, keys.REDIS_RECORDS_URL]).toEqual([
      'redis://admin:a@127.0.0.1:40123',
      'redis://admin:a@127.0.0.1:40124',
    ]);
    // The operator's own Redis: never half of it from the stack file.
    const own = operatorEnv('risk', { STACK_FILE: twoServers, REDIS_URL: 'redis://10.0.0.5:6379' }).env;
    expect([own.REDIS_URL, own.REDIS_RECORDS_URL]).toEqual(['redis://10.0.0.5:6379', undefined]);
  });

  it('behavior: an explicit REDIS_URL, CONFIG_FILE or CHAINS wins', () => {
    const a = operatorEnv('keys', {
      STACK_FILE: file,
      REDIS_URL: 'redis://10.0.0.5:6379',
      CONFIG_FILE: '/etc/pmm.json',
    });
    expect([a.env.REDIS_URL, a.env.CONFIG_FILE, a.redisFrom]).toEqual([
      'redis://10.0.0.5:6379',
      '/etc/pmm.json',
      'REDIS_URL',
    ]);
    expect(operatorEnv('keys', { STACK_FILE: file, CHAINS: '{}' }).env.CONFIG_FILE).toBeUndefined();
  });

  it("default: the stack file is the repository's .local/stack.json, where scripts/start.mjs writes it", () => {
    // Computed from operator-stack's own folder (src/stack, dist/stack): it moves with the file.
    expect(DEFAULT_STACK_FILE).toBe(path.resolve(__dirname, '..', '..', '..', '..', '.local', 'stack.json'));
  });

  it('boundary: no stack file (an image, no npm start): nothing is added', () => {
    const { env, redisFrom } = operatorEnv('keys', { STACK_FILE: path.join(dir, 'missing.json') });
    expect(env.REDIS_URL).toBeUndefined();
    expect(env.CONFIG_FILE).toBeUndefined();
    expect(redisFrom).toBe('default');
  });
});
