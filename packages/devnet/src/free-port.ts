import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port picked: above the well-known ports our own stack and tools default to. */
const PICK_FLOOR = 20_000;

/** The first port of the kernel's ephemeral range (outgoing connections' local ports), if known. */
function ephemeralFloor(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ports this process handed out lately, with when. A server is often started seconds after its
 * port is picked (the test systems' services wait for the chains file before they listen), and
 * until it binds, the port looks free: a later pick of this process could return it again, and
 * the second server to bind would fail (seen in a full run: an indexer's EADDRINUSE). Not handed
 * out again for HOLD_MS, longer than a service waits for its config.
 */
const handedOut = new Map<number, number>();
const HOLD_MS = 5 * 60_000;

function held(port: number, now: number): boolean {
  const at = handedOut.get(port);
  return at !== undefined && now - at < HOLD_MS;
}

function handOut(port: number): number {
  const now = Date.now();
  for (const [p, at] of handedOut) if (now - at >= HOLD_MS) handedOut.delete(p);
  handedOut.set(port, now);
  return port;
}

/** Listens on `port` (0: the OS picks) on 127.0.0.1 and closes; resolves the port, or undefined if taken. */
function tryBind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.on('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, for a server started next. Picked at random
 * below the kernel's ephemeral range, not by the OS (`listen(0)`), because the OS hands ports of
 * that range to outgoing connections too: under a busy test suite a client's connection took such
 * a port between the pick and the server's bind (CI saw EADDRINUSE from anvil and from a
 * service). Below the range only another listener can take it, or a server of this process
 * not yet bound to a port it was handed: those are skipped (`handedOut`). Where the range is
 * unknown or leaves no room, the OS picks.
 */
export async function findFreePort(): Promise<number> {
  const ceiling = ephemeralFloor();
  if (ceiling !== undefined && ceiling - PICK_FLOOR >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const candidate = PICK_FLOOR + Math.floor(Math.random() * (ceiling - PICK_FLOOR));
      if (held(candidate, Date.now())) continue;
      const port = await tryBind(candidate);
      if (port !== undefined) return handOut(port);
    }
  }
  const picked = await tryBind(0);
  if (picked === undefined) throw new Error('could not get a free port');
  return handOut(picked);
}

/** Resolves if `port` can be bound on 127.0.0.1 right now, rejects naming the port otherwise. */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`port ${port} on 127.0.0.1 is not available (${err.code ?? err.message})`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}
