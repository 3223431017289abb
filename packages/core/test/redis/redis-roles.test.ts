import { REDIS_KEY_ROLES, oneRedisServer, redisKeyRole, redisKeys, roleServers, type RedisClient } from '../../src';

describe('the two Redis roles: which key lives where', () => {
  const keys = redisKeys('pmm');

  it('every name of the key map is found again in a key it builds, with its own role', () => {
    // (That every name has a role the type checker already holds.) Each name's key, built with
    // arguments of the shapes the services use, classified back: a new name whose pattern another
    // name of the other role would also match is caught here.
    for (const [name, role] of Object.entries(REDIS_KEY_ROLES)) {
      const build = keys[name as keyof typeof keys] as (...args: (string | number)[]) => string;
      const key = build(8453, 20_000);
      expect([name, key, redisKeyRole(key, 'pmm')]).toEqual([name, key, role]);
    }
  });

  it('the records: what nothing can rebuild', () => {
    for (const key of [
      keys.apiKey('ab12'),
      keys.apiKeyIndex(),
      keys.revokedApiKeys(),
      keys.integrator('acme'),
      keys.audit(8453),
      keys.auditSignatures(8453, 20_000),
      keys.auditQuota(56, 20_000),
      keys.ledger(4663),
      keys.ledgerCursor(4663),
      keys.ledgerBlocks(4663),
      keys.ledgerDay(4663, 20_000),
      keys.ledgerMarkouts(4663),
      keys.halts(),
      keys.haltLog(),
    ])
      expect([key, redisKeyRole(key, 'pmm')]).toEqual([key, 'records']);
  });

  it('what can be rebuilt, side keys and queue keys included', () => {
    for (const key of [
      keys.book(8453),
      `${keys.book(8453)}:block`,
      `${keys.book(8453)}:hash`,
      keys.pairs(56),
      keys.rateLimit('acme', 1_700_000_000),
      keys.streamSlots('ab12'),
      keys.indexerPresence(8453, 'host:1'),
      keys.indexerPresenceIndex(8453),
      keys.mids(8453),
      keys.midTimes(8453),
      `${keys.queuePrefix(8453)}:blocks:meta`,
      `${keys.queuePrefix(8453)}:blocks:42`,
    ])
      expect([key, redisKeyRole(key, 'pmm')]).toEqual([key, 'rebuildable']);
  });

  it('the longest name wins: a key that extends another is not taken for its side key', () => {
    expect(redisKeyRole(keys.ledgerCursor(1), 'pmm')).toBe('records');
    expect(redisKeyRole(keys.midTimes(1), 'pmm')).toBe('rebuildable');
    expect(redisKeyRole(keys.revokedApiKeys(), 'pmm')).toBe('records');
  });

  it('a key the map does not name, or under another prefix, has no role', () => {
    expect(redisKeyRole('pmm:something-else', 'pmm')).toBeUndefined();
    expect(redisKeyRole(keys.book(8453), 'other')).toBeUndefined();
    expect(redisKeyRole('pmm:{8453}:bookish', 'pmm')).toBeUndefined();
  });

  it('one server holds both roles when the URLs are the same', () => {
    expect(oneRedisServer({ redisUrl: 'redis://a:1', redisRecordsUrl: 'redis://a:1' })).toBe(true);
    expect(oneRedisServer({ redisUrl: 'redis://a:1', redisRecordsUrl: 'redis://b:1' })).toBe(false);
  });

  it('a process acts once per distinct server, by the role it holds: the records first', () => {
    // Connections stand in as opaque objects: roleServers only compares them.
    const [rebuildable, records] = [{ name: 'rebuildable' }, { name: 'records' }] as unknown as RedisClient[];
    expect(roleServers(rebuildable!, records!)).toEqual([
      { client: records, role: 'records' },
      { client: rebuildable, role: 'rebuildable' },
    ]);
    // One server holds both: it is checked as the records' (the stricter role), once.
    expect(roleServers(records!, records!)).toEqual([{ client: records, role: 'records' }]);
  });
});
