/**
 * The devnet as a whole: three real anvil nodes, deployed and seeded, described by the stack
 * file, and cleaned up without leftovers.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockV3AggregatorArtifact, PmmHelperArtifact, PmmRouterArtifact, TestTokenArtifact } from '@pmm/contracts';
import { CHAINS, findChain } from '@pmm/protocol';
import { getAddress, keccak256, toHex, type Address } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { chainClients } from '@pmm/testkit';
import {
  DEVNET_VALIDITY_SECONDS,
  predictDeploymentAddresses,
  readStack,
  REFERENCE_FEED_DECIMALS,
  seedPlan,
  startDevnet,
  type ChainStack,
  type Devnet,
} from '../src';
import { DEVNET_HARDFORK, anvilBinary } from '../src/anvil-node';
import { rpcCall } from '../src/rpc';

const CHAIN_IDS = [8453, 56, 4663];
let devnet: Devnet;
let tmp: string;
let stackFile: string;

const chainOf = (id: number): ChainStack => {
  const c = devnet.stack.chains[String(id)];
  if (!c) throw new Error(`chain ${id} missing from the stack`);
  return c;
};
/** Running (a zombie left for an init that does not reap counts as dead). */
const isAlive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};
/** Pids of the anvil node processes whose parent is this process. */
const childNodePids = (): number[] =>
  readdirProc().filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === process.pid && readlinkSync(`/proc/${pid}/exe`) === anvilBinary();
    } catch {
      return false;
    }
  });
function readdirProc(): number[] {
  return require('node:fs')
    .readdirSync('/proc')
    .filter((d: string) => /^\d+$/.test(d))
    .map(Number);
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'pmm-devnet-test-'));
  stackFile = path.join(tmp, 'stack.json');
  devnet = await startDevnet({ chains: CHAIN_IDS, blockIntervalMs: 250, stackFile });
}, 120_000);

afterAll(async () => {
  await devnet?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('startDevnet', () => {
  test('behavior: each chain answers eth_chainId with its own id', async () => {
    for (const id of CHAIN_IDS) {
      expect(await rpcCall(chainOf(id).rpcUrl, 'eth_chainId')).toBe(toHex(id));
    }
  });

  test('behavior: every contract and token has the same address on every chain, as predicted', async () => {
    const deployer = chainOf(8453).deployer.address;
    // The node's own account #0 (its derivation, not ours) is the deployer.
    const accounts = (await rpcCall(chainOf(8453).rpcUrl, 'eth_accounts')) as string[];
    expect(getAddress(accounts[0] ?? '')).toBe(deployer);
    const predicted = predictDeploymentAddresses(deployer, 2);
    for (const id of CHAIN_IDS) {
      const c = chainOf(id);
      expect(c.contracts).toEqual({
        router: predicted.router,
        helper: predicted.helper,
        verifier: predicted.verifier,
        multicall3: predicted.multicall3,
      });
      expect(c.quoteToken.address).toBe(predicted.quoteToken);
      expect(c.baseTokens.map((t) => t.address)).toEqual(predicted.baseTokens);
      expect(c.baseTokens.map((t) => c.references[t.address]?.feed)).toEqual(predicted.referenceFeeds);
    }
  });

  test("behavior: each pair's reference feed answers the seed plan's price with 8 decimals, in a round of its own", async () => {
    for (const id of CHAIN_IDS) {
      const c = chainOf(id);
      const { publicClient } = chainClients(c);
      for (const [i, base] of seedPlan(id).baseTokens.entries()) {
        const feed = {
          address: c.references[c.baseTokens[i]!.address]!.feed as Address,
          abi: MockV3AggregatorArtifact.abi,
        } as const;
        expect(await publicClient.readContract({ ...feed, functionName: 'decimals' })).toBe(REFERENCE_FEED_DECIMALS);
        const [roundId, answer, , updatedAt] = await publicClient.readContract({
          ...feed,
          functionName: 'latestRoundData',
        });
        expect(answer).toBe(base.midPrice * 10n ** 8n);
        expect(roundId).toBe(1n);
        expect(updatedAt).toBeGreaterThan(0n);
      }
    }
  });

  test('behavior: the on-chain quote token has the registry symbol and decimals of each chain', async () => {
    for (const id of CHAIN_IDS) {
      const c = chainOf(id);
      const { publicClient } = chainClients(c);
      const expected = findChain(id)?.quoteToken;
      const token = { address: c.quoteToken.address as Address, abi: TestTokenArtifact.abi } as const;
      expect(await publicClient.readContract({ ...token, functionName: 'symbol' })).toBe(expected?.symbol);
      expect(await publicClient.readContract({ ...token, functionName: 'decimals' })).toBe(expected?.decimals);
      expect(c.quoteToken).toEqual({ address: c.quoteToken.address, ...expected });
    }
    expect(CHAINS.map((c) => c.chainId).sort()).toEqual([...CHAIN_IDS].sort());
  });

  test('behavior: helper lists quote token then bases, and reports the seeded reserves', async () => {
    for (const id of CHAIN_IDS) {
      const c = chainOf(id);
      const plan = seedPlan(id);
      const { publicClient } = chainClients(c);
      const helper = { address: c.contracts.helper as Address, abi: PmmHelperArtifact.abi } as const;
      const listed = await publicClient.readContract({ ...helper, functionName: 'getListedTokens' });
      const tokens = [c.quoteToken.address, ...c.baseTokens.map((t) => t.address)];
      expect(listed).toEqual(tokens);
      expect(await publicClient.readContract({ ...helper, functionName: 'getQuoteToken' })).toBe(c.quoteToken.address);
      const reserves = await publicClient.readContract({
        ...helper,
        functionName: 'getReserveBalances',
        args: [tokens as Address[]],
      });
      expect(reserves).toEqual([plan.quoteToken.routerReserve, ...plan.baseTokens.map((b) => b.routerReserve)]);
      // The ask ladder must be cut by the reserves before the curve ends (seed-plan invariant).
      for (const b of plan.baseTokens) {
        expect(b.routerReserve).toBeLessThan(b.curve.askDepths[b.curve.askDepths.length - 1] ?? 0n);
        expect(b.routerReserve).toBeGreaterThan(b.curve.askDepths[b.curve.askDepths.length - 2] ?? 0n);
      }
    }
  });

  test('behavior: role keys are derived per chain, funded, whitelisted and set on the router', async () => {
    const seen = new Set<string>();
    for (const id of CHAIN_IDS) {
      const c = chainOf(id);
      const { publicClient } = chainClients(c);
      const router = { address: c.contracts.router as Address, abi: PmmRouterArtifact.abi } as const;
      for (const role of ['apiSigner', 'quoter', 'testUser'] as const) {
        const key = c[role];
        expect(key.privateKey).toBe(keccak256(toHex(`pmm-devnet:${role}:${id}`)));
        expect(key.address).toBe(privateKeyToAddress(key.privateKey as `0x${string}`));
        expect(await publicClient.getBalance({ address: key.address as Address })).toBe(10n ** 21n);
        seen.add(key.address);
      }
      expect(await publicClient.readContract({ ...router, functionName: 'apiSigner' })).toBe(c.apiSigner.address);
      expect(
        await publicClient.readContract({ ...router, functionName: 'isQuoter', args: [c.quoter.address as Address] }),
      ).toBe(true);
      expect(
        await publicClient.readContract({ ...router, functionName: 'isQuoter', args: [c.testUser.address as Address] }),
      ).toBe(true);
      expect(
        await publicClient.readContract({
          ...router,
          functionName: 'isQuoter',
          args: [c.apiSigner.address as Address],
        }),
      ).toBe(false);
      expect(await publicClient.readContract({ ...router, functionName: 'validity' })).toBe(60n);
      const plan = seedPlan(id);
      for (const [i, t] of c.baseTokens.entries()) {
        const balance = await publicClient.readContract({
          address: t.address as Address,
          abi: TestTokenArtifact.abi,
          functionName: 'balanceOf',
          args: [c.testUser.address as Address],
        });
        expect(balance).toBe(plan.baseTokens[i]?.testUserBalance);
      }
    }
    expect(seen.size).toBe(9); // different on every chain
  });

  test('behavior: interval mining is back on after setup (blocks advance, automine off)', async () => {
    const { rpcUrl } = chainOf(56);
    expect(await rpcCall(rpcUrl, 'anvil_getAutomine')).toBe(false);
    const before = BigInt((await rpcCall(rpcUrl, 'eth_blockNumber')) as string);
    await new Promise((r) => setTimeout(r, 800));
    const after = BigInt((await rpcCall(rpcUrl, 'eth_blockNumber')) as string);
    expect(after).toBeGreaterThanOrEqual(before + 2n);
  });

  test('behavior: every node runs the pinned hardfork, and its block timestamps follow the wall clock', async () => {
    for (const id of CHAIN_IDS) {
      const info = (await rpcCall(chainOf(id).rpcUrl, 'anvil_nodeInfo')) as { hardFork: string };
      expect(info.hardFork.toLowerCase()).toBe(DEVNET_HARDFORK);
    }
    // Four blocks a second for a few seconds: a node that gave each block a strictly later second
    // would now be ahead of the wall clock by seconds (and the signer's quotes from its past).
    await new Promise((r) => setTimeout(r, 3000));
    const block = (await rpcCall(chainOf(56).rpcUrl, 'eth_getBlockByNumber', ['latest', false])) as {
      timestamp: string;
    };
    const behind = Date.now() / 1000 - Number(BigInt(block.timestamp));
    expect(behind).toBeGreaterThan(-1.5);
    expect(behind).toBeLessThan(5);
  });

  test('behavior: the stack file has the required shape and matches devnet.stack', () => {
    const raw = JSON.parse(readFileSync(stackFile, 'utf8')) as { chains: Record<string, Record<string, unknown>> };
    expect(Object.keys(raw.chains).sort()).toEqual(CHAIN_IDS.map(String).sort());
    for (const id of CHAIN_IDS) {
      const c = raw.chains[String(id)] ?? {};
      expect(c).toMatchObject({
        chainId: id,
        rpcUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        wsUrl: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+$/),
        contracts: {
          router: expect.any(String),
          helper: expect.any(String),
          verifier: expect.any(String),
          multicall3: expect.any(String),
        },
        quoteToken: { address: expect.any(String), symbol: expect.any(String), decimals: expect.any(Number) },
        apiSigner: { address: expect.any(String), privateKey: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
        quoter: { address: expect.any(String), privateKey: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
        testUser: { address: expect.any(String), privateKey: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
      });
      expect(c.baseTokens).toEqual([
        { address: expect.any(String), symbol: 'WETH', decimals: 18 },
        { address: expect.any(String), symbol: 'WBTC', decimals: 8 },
      ]);
      for (const address of [c.contracts, c.quoteToken].flatMap((o) => Object.values(o as object))) {
        if (typeof address === 'string' && address.startsWith('0x')) expect(getAddress(address)).toBe(address);
      }
    }
    expect(readStack(stackFile)).toEqual(devnet.stack);
  });

  test('error: readStack names the first missing field', () => {
    const broken = path.join(tmp, 'broken.json');
    const stack = JSON.parse(readFileSync(stackFile, 'utf8')) as {
      chains: Record<string, { contracts: Record<string, unknown> }>;
    };
    delete stack.chains['56']?.contracts.helper;
    require('node:fs').writeFileSync(broken, JSON.stringify(stack));
    expect(() => readStack(broken)).toThrow('stack file: chains.56.contracts.helper must be a string');
  });

  test('behavior: pauseChain hangs the RPC, resumeChain brings it back', async () => {
    const { rpcUrl } = chainOf(4663);
    devnet.pauseChain(4663);
    await expect(rpcCall(rpcUrl, 'eth_chainId', [], 500)).rejects.toThrow();
    devnet.resumeChain(4663);
    expect(await rpcCall(rpcUrl, 'eth_chainId', [], 5000)).toBe(toHex(4663));
  });

  test('behavior: stopChain refuses connections, startChain restarts on the same port with the same addresses and fresh state', async () => {
    const before = chainOf(4663);
    const snapshot = JSON.stringify(before);
    await devnet.stopChain(4663);
    await expect(rpcCall(before.rpcUrl, 'eth_chainId', [], 500)).rejects.toThrow();
    await devnet.startChain(4663);
    expect(JSON.stringify(chainOf(4663))).toBe(snapshot);
    expect(await rpcCall(before.rpcUrl, 'eth_chainId')).toBe(toHex(4663));
    const { publicClient } = chainClients(before);
    const listed = await publicClient.readContract({
      address: before.contracts.helper as Address,
      abi: PmmHelperArtifact.abi,
      functionName: 'getListedTokens',
    });
    expect(listed).toHaveLength(3);
  }, 60_000);

  test('behavior: stop() kills every node: no child process is left', async () => {
    const pids = childNodePids();
    expect(pids).toHaveLength(CHAIN_IDS.length);
    await devnet.stop();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(childNodePids()).toEqual([]);
    for (const id of CHAIN_IDS) await expect(rpcCall(chainOf(id).rpcUrl, 'eth_chainId', [], 500)).rejects.toThrow();
  });
});

describe('start-up failure', () => {
  test('error: a port already in use fails start-up naming the port, and the chains already started are killed', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      await expect(startDevnet({ chains: [8453, 56], ports: { 56: port }, blockIntervalMs: 0 })).rejects.toThrow(
        `port ${port} on 127.0.0.1 is not available`,
      );
      expect(childNodePids()).toEqual([]);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('seedPlan', () => {
  test("behavior: the router's validity is the reference router's 60 s unless another is asked for (startDevnet's validitySeconds)", () => {
    expect(seedPlan(8453).validitySeconds).toBe(DEVNET_VALIDITY_SECONDS);
    expect(DEVNET_VALIDITY_SECONDS).toBe(60);
    expect(seedPlan(8453, 15).validitySeconds).toBe(15);
  });

  test('error: a validity that is not a whole number of seconds of at least 1 is refused', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => seedPlan(8453, bad)).toThrow(/validity must be/);
  });
});

describe('node watchdog', () => {
  test('behavior: a node process is killed when the process that started it is SIGKILLed', async () => {
    const watchdog = path.resolve(__dirname, '..', 'watchdog', 'node-watchdog.cjs');
    // middle: starts a long-lived "node" and its watchdog as the devnet does, prints the node's pid, then waits.
    const script = `
      const { spawn } = require('node:child_process');
      const node = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      spawn(process.execPath, [${JSON.stringify(watchdog)}], {
        stdio: 'ignore', env: { DEVNET_PARENT_PID: String(process.pid), DEVNET_NODE_PID: String(node.pid) } });
      console.log(node.pid);
      setInterval(() => {}, 1000);`;
    const middle = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const node = await new Promise<number>((resolve) =>
      middle.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    // The watchdog leaves a living starter's node alone.
    await new Promise((r) => setTimeout(r, 1500));
    expect(isAlive(node)).toBe(true);
    middle.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (isAlive(node) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(node)).toBe(false);
  });
});
