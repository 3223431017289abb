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
