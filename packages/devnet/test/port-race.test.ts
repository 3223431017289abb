/**
 * A port the devnet picked is free when picked, but another process can take it before anvil
 * binds it (parallel tests, outgoing connections). The race is forced here: the picker the test
 * gives (`pickPort`) first answers a port this test holds. Everything else is real (anvil, deploy).
 */
import { createServer, type Server } from 'node:net';
import { startDevnet } from '../src';
import { PortInUseError } from '../src/anvil-node';
import { findFreePort } from '../src/free-port';

const held: Server = createServer();
let heldPort = 0;
let picks = 0;
/** The first pick is the held port, as if it had been taken just after the pick. */
const pickPort = async () => (++picks === 1 ? heldPort : findFreePort());

beforeAll(async () => {
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  heldPort = (held.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((r) => held.close(() => r()));
});

beforeEach(() => {
  picks = 0;
});

describe('a picked port taken before the node binds it', () => {
  it('behavior: the devnet picks another and the chain comes up there', async () => {
    const said: string[] = [];
    const devnet = await startDevnet({ chains: [8453], blockIntervalMs: 0, pickPort, log: (m) => said.push(m) });
    try {
      const chain = devnet.stack.chains['8453']!;
      expect(chain.rpcUrl).not.toContain(`:${heldPort}`);
      expect(said.join('\n')).toContain(`port ${heldPort} was taken before the node bound it`);
      expect(picks).toBe(2);
    } finally {
      await devnet.stop();
    }
  }, 60_000);

  it('behavior: a port the caller gave is not moved; the start fails naming it', async () => {
    const start = startDevnet({ chains: [8453], blockIntervalMs: 0, pickPort, ports: { 8453: heldPort } });
    await expect(start).rejects.toBeInstanceOf(PortInUseError);
    await expect(start).rejects.toThrow(`port ${heldPort}`);
  }, 60_000);
});
