/** Ports for tests that start their own servers. */
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './repo-root';

/**
 * A TCP port free on 127.0.0.1 a moment ago: the devnet's picker (packages/devnet/src/free-port.ts,
 * which says why it picks below the ephemeral range). Loaded from its build by path: the devnet's
 * index would load ethers into every test that imports testkit.
 */
export function freePort(): Promise<number> {
  return devnetPorts().findFreePort();
}

type DevnetPorts = typeof import('@pmm/devnet/dist/free-port');
let loadedPorts: DevnetPorts | undefined;
function devnetPorts(): DevnetPorts {
  loadedPorts ??= createRequire(__filename)(path.join(REPO_ROOT, 'packages/devnet/dist/free-port.js')) as DevnetPorts;
  return loadedPorts;
}

/** Whether a server could listen on `port` on 127.0.0.1 right now (the devnet's own check). */
export function canListen(port: number): Promise<boolean> {
  return devnetPorts()
    .assertPortFree(port)
    .then(
      () => true,
      () => false,
    );
}

/** Resolves once something accepts TCP connections on `port`. */
export function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`port ${port} not open after ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}
