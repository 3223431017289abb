/** The port picker: below the ephemeral range, where outgoing connections never take a port. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { findFreePort } from '../src/free-port';

const ephemeralFloor = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

it('behavior: picks ports below the kernel ephemeral range that a server can then bind', async () => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => findFreePort()));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(ephemeralFloor);
  }
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ports[0], '127.0.0.1', resolve);
  });
  await new Promise<void>((r) => server.close(() => r()));
});

it('behavior: a port it handed out is not handed out again by this process, bound or not', async () => {
  // A thousand picks from the ~12,000 ports below the range: without the memory, two would be
  // the same almost surely (a birthday bound of 1 - e^-39 for 12,768 ports).
  const ports: number[] = [];
  for (let i = 0; i < 1_000; i++) ports.push(await findFreePort());
  expect(new Set(ports).size).toBe(ports.length);
});
