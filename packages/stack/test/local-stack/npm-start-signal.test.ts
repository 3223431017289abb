/**
 * `npm start` as a supervisor runs it (`timeout`, a CI step, a container whose first process is
 * npm): a SIGTERM to npm must stop the whole stack, not leave the start script and every
 * service, chain and Redis it started running without their parent.
 */
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { startStack, until } from '@pmm/testkit';

/** True once nothing listens on the URL's host and port. */
function refuses(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

it('behavior: SIGTERM to `npm start` stops every process of the stack: services, chains and Redis', async () => {
  const stack = await startStack({ throughNpm: true });
  const described = JSON.parse(readFileSync(stack.stackFile, 'utf8')) as {
    gateway: { url: string };
    redis: { url: string; recordsUrl: string };
    metrics: Record<string, string>;
    chains: Record<string, { rpcUrl: string }>;
  };
  const endpoints = [
    described.gateway.url,
    ...[described.redis.url, described.redis.recordsUrl].map((url) => url.replace(/^redis:\/\/[^@]*@/, 'redis://')),
    ...Object.values(described.metrics),
    ...Object.values(described.chains).map((c) => c.rpcUrl),
  ];
  // The gateway and both Redis servers; the metrics of the gateway, the signer, three indexers and three ledgers; three chains.
  expect(endpoints).toHaveLength(3 + 8 + 3);
  for (const url of endpoints) expect(await refuses(url)).toBe(false);
  // A newcomer's start shows no failure that is not one: the ledgers' first blocks once raced
  // their Redis connection and each logged a failed block.
  expect(stack.output()).not.toMatch(/"message":"ledger block"/);

  stack.process.kill('SIGTERM');
  await until(
    async () => (await Promise.all(endpoints.map(refuses))).every(Boolean),
    30_000,
    'every process of the stack stopped',
    200,
  );
}, 180_000);
