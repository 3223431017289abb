/**
 * Connects with createRedis to the URL in PMM_TEST_REDIS_URL, writes and reads a key, and prints
 * `{ whoami: [the ACL user of each master connection], value }` as JSON. Run as a child process
 * (`node -r scripts/lib/ts-register.cjs`) by redis-url-auth.test.ts, so that NODE_EXTRA_CA_CERTS,
 * which Node reads only at start, can make it trust a test's self-signed certificate.
 */
import { Cluster } from 'ioredis';
import { createRedis, redisReady } from '@pmm/core';

async function main(): Promise<void> {
  const client = createRedis(process.env.PMM_TEST_REDIS_URL!, { name: 'whoami' });
  try {
    await redisReady(client, 15_000);
    await client.set('pmm-test:whoami', 'ok', 'EX', 10);
    const value = await client.get('pmm-test:whoami');
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    const whoami = await Promise.all(nodes.map((n) => n.call('ACL', 'WHOAMI')));
    process.stdout.write(JSON.stringify({ whoami, value }));
  } finally {
    client.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
