/** REDIS_USERNAME and REDIS_PASSWORD in place of the credentials a REDIS_URL carries (pure logic). */
import { parseMultiHostUrl } from '../../src/redis/redis-client';
import { redisConnectionUrls } from '../../src/settings/shared-settings';

describe('redisConnectionUrls', () => {
  it('behavior: without REDIS_USERNAME and REDIS_PASSWORD the URL is used as it is', () => {
    expect(redisConnectionUrls({ redisUrl: 'redis://:old@redis:6379/0', redisUsername: '' }).redisUrl).toBe(
      'redis://:old@redis:6379/0',
    );
  });

  it('error: REDIS_USERNAME without REDIS_PASSWORD is refused, not ignored', () => {
    expect(
      () => redisConnectionUrls({ redisUrl: 'redis://:old@redis:6379/0', redisUsername: 'gateway' }).redisUrl,
    ).toThrow('REDIS_USERNAME (redisUsername): needs REDIS_PASSWORD (or REDIS_PASSWORD_FILE)');
  });

  it('behavior: the user and password replace the URL credentials, encoded, on every scheme', () => {
    const creds = { redisUsername: 'indexer-8453', redisPassword: 'p@ss/word:1' };
    expect(redisConnectionUrls({ ...creds, redisUrl: 'redis://redis:6379' }).redisUrl).toBe(
      'redis://indexer-8453:p%40ss%2Fword%3A1@redis:6379',
    );
    expect(redisConnectionUrls({ ...creds, redisUrl: 'rediss://old:secret@redis.example:6380/2' }).redisUrl).toBe(
      'rediss://indexer-8453:p%40ss%2Fword%3A1@redis.example:6380/2',
    );
    expect(redisConnectionUrls({ ...creds, redisUrl: 'redis-sentinel://s1:26379,s2:26379/mymaster' }).redisUrl).toBe(
      'redis-sentinel://indexer-8453:p%40ss%2Fword%3A1@s1:26379,s2:26379/mymaster',
    );
    expect(redisConnectionUrls({ ...creds, redisUrl: 'redis-cluster://:x@c1:7000,c2:7000' }).redisUrl).toBe(
      'redis-cluster://indexer-8453:p%40ss%2Fword%3A1@c1:7000,c2:7000',
    );
  });

  it('behavior: a password without a user name authenticates as the default user', () => {
    expect(
      redisConnectionUrls({ redisUrl: 'redis://redis:6379', redisUsername: '', redisPassword: 'secret-value' })
        .redisUrl,
    ).toBe('redis://:secret-value@redis:6379');
  });

  it('behavior: what it writes into a Sentinel or Cluster URL, the multi-host parser reads back as given', () => {
    const creds = { redisUsername: 'indexer-8453', redisPassword: 'p@ss/w:rd%1,x' };
    for (const redisUrl of ['rediss-sentinel://s1:26379,s2:26379/pmm', 'redis-cluster://old:o@c1:7000,c2:7001']) {
      const parsed = parseMultiHostUrl(redisConnectionUrls({ ...creds, redisUrl }).redisUrl);
      expect([parsed?.username, parsed?.password, parsed?.hosts.length]).toEqual(['indexer-8453', 'p@ss/w:rd%1,x', 2]);
    }
  });

  describe('the sentinels’ own credentials (REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD)', () => {
    const base = { redisUrl: 'redis-sentinel://s1:26379,s2:26379/pmm', redisUsername: '' };

    it('behavior: they go into the Sentinel URL’s query, and the parser reads them back as given', () => {
      const password = 'p@ss&w=rd+%1 ?#';
      const url = redisConnectionUrls({
        ...base,
        redisSentinelUsername: 'watcher',
        redisSentinelPassword: password,
      }).redisUrl;
      expect(url.startsWith('redis-sentinel://s1:26379,s2:26379/pmm?')).toBe(true);
      expect(parseMultiHostUrl(url)).toMatchObject({
        master: 'pmm',
        sentinelUsername: 'watcher',
        sentinelPassword: password,
      });
      expect(parseMultiHostUrl(url)?.hosts).toHaveLength(2);
    });

    it('behavior: they replace the ones the URL carries; the data credentials are set apart', () => {
      const url = redisConnectionUrls({
        redisUrl: 'rediss-sentinel://s1:26379/pmm?sentinelUsername=old&sentinelPassword=old-password',
        redisUsername: 'signer',
        redisPassword: 'data-password',
        redisSentinelPassword: 'new-password',
      }).redisUrl;
      expect(parseMultiHostUrl(url)).toMatchObject({
        tls: true,
        username: 'signer',
        password: 'data-password',
        master: 'pmm',
        sentinelPassword: 'new-password',
      });
      expect(parseMultiHostUrl(url)?.sentinelUsername).toBeUndefined();
    });

    it('behavior: a bare `?` in a data password the URL carries is not taken for the query', () => {
      const url = redisConnectionUrls({
        redisUrl: 'redis-sentinel://app:pa?ss@s1:26379/pmm?sentinelPassword=old',
        redisUsername: '',
        redisSentinelPassword: 'new-password',
      }).redisUrl;
      expect(parseMultiHostUrl(url)).toMatchObject({
        username: 'app',
        password: 'pa?ss',
        sentinelPassword: 'new-password',
      });
    });

    it('error: a sentinel user name without its password is refused, not ignored', () => {
      expect(() => redisConnectionUrls({ ...base, redisSentinelUsername: 'watcher' }).redisUrl).toThrow(
        'REDIS_SENTINEL_USERNAME (redisSentinelUsername): needs REDIS_SENTINEL_PASSWORD (or REDIS_SENTINEL_PASSWORD_FILE)',
      );
    });

    it('error: a sentinel password for a URL that names no sentinels is refused', () => {
      for (const redisUrl of ['redis://redis:6379', 'redis-cluster://c1:7000,c2:7000'])
        expect(
          () => redisConnectionUrls({ redisUrl, redisUsername: '', redisSentinelPassword: 'secret-value' }).redisUrl,
        ).toThrow(
          'REDIS_SENTINEL_PASSWORD (redisSentinelPassword): only for a redis-sentinel:// or rediss-sentinel:// REDIS_URL',
        );
    });
  });

  describe('the records role (REDIS_RECORDS_URL)', () => {
    const creds = { redisUsername: 'signer', redisPassword: 'p@ss' };

    it('is REDIS_URL itself when empty or absent: one server holds both roles', () => {
      for (const redisRecordsUrl of [undefined, '']) {
        const urls = redisConnectionUrls({ ...creds, redisUrl: 'redis://redis:6379', redisRecordsUrl });
        expect(urls.redisRecordsUrl).toBe(urls.redisUrl);
        expect(urls.redisUrl).toBe('redis://signer:p%40ss@redis:6379');
      }
    });

    it('gets the same user and password as REDIS_URL', () => {
      const urls = redisConnectionUrls({
        ...creds,
        redisUrl: 'redis://cache:6379',
        redisRecordsUrl: 'redis://old:x@records:6380/0',
      });
      expect(urls).toEqual({
        redisUrl: 'redis://signer:p%40ss@cache:6379',
        redisRecordsUrl: 'redis://signer:p%40ss@records:6380/0',
      });
    });

    it('a sentinel password goes to the URL that names sentinels, and only there', () => {
      const urls = redisConnectionUrls({
        ...creds,
        redisUrl: 'redis://cache:6379',
        redisRecordsUrl: 'redis-sentinel://s1:26379,s2:26379/records',
        redisSentinelPassword: 'sentinel-secret',
      });
      expect(urls.redisUrl).toBe('redis://signer:p%40ss@cache:6379');
      expect(urls.redisRecordsUrl).toBe(
        'redis-sentinel://signer:p%40ss@s1:26379,s2:26379/records?sentinelPassword=sentinel-secret',
      );
    });

    it('error: a sentinel password when neither URL names sentinels', () => {
      expect(() =>
        redisConnectionUrls({
          redisUrl: 'redis://cache:6379',
          redisRecordsUrl: 'redis-cluster://c1:7000,c2:7000',
          redisUsername: '',
          redisSentinelPassword: 'secret-value',
        }),
      ).toThrow('REDIS_SENTINEL_PASSWORD (redisSentinelPassword): only for a redis-sentinel://');
    });
  });
});
