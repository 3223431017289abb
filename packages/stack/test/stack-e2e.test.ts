/**
 * End to end, as a newcomer runs it: the README's start script (scripts/start.mjs, here on
 * free ports and with its own stack file) brings up Redis, the three devnet chains, an
 * indexer per chain, the signer and the gateway; the demo flow then runs on every chain
 * through the SDK (book → sign → approve → swap); SIGINT must stop every process it started.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runDemo } from '../../client/examples/demo';
import { startStack, type StartedStack } from './support/started-stack';

function descendants(pid: number): number[] {
  let out: string;
  try {
    out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    children.set(pp!, [...(children.get(pp!) ?? []), p!]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all;
}

/** Running, not merely a zombie waiting for a parent (kill(pid, 0) succeeds on zombies). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('the stack started as the README says', () => {
  let stack: ChildProcess;
  let started: StartedStack;
  const output = () => started.output();
  let stackFile: string;

  beforeAll(async () => {
    started = await startStack();
    stack = started.process;
    stackFile = started.stackFile;
  }, 180_000);

  afterAll(() => {
    if (stack.exitCode === null) stack.kill('SIGKILL');
  });

  it('behavior: announces each part as it becomes ready, then the URL, a key and curl examples', () => {
    for (const part of [
      'redis ready',
      'chain 8453 ready',
      'chain 56 ready',
      'chain 4663 ready',
      'indexer 8453 ready',
      'signer ready',
      'gateway ready',
    ])
      expect(output()).toContain(part);
    expect(output()).toMatch(/Development API key .*: pmm_dev_/);
    expect(output()).toContain("curl -s -H 'X-API-KEY:");
  });

  it('behavior: the demo swap succeeds on every chain and pays at least the book estimate', async () => {
    const lines: string[] = [];
    const results = await runDemo(stackFile, (l) => lines.push(l));
    expect(results.map((r) => r.chainId).sort()).toEqual([56, 4663, 8453].sort());
    for (const r of results) {
      expect(r.received).toBeGreaterThan(0n);
      expect(r.received).toBeGreaterThanOrEqual(r.estimated);
    }
  }, 120_000);

  it('behavior: a killed part (the signer, the private Redis) is restarted; the development key keeps working', async () => {
    const { gateway, chains } = JSON.parse(readFileSync(stackFile, 'utf8'));
    const cmdline = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    };
    const pidOf = (needle: string) => descendants(stack.pid!).find((p) => cmdline(p).includes(needle));
    process.kill(pidOf('services/signer/dist/main.js')!, 'SIGKILL');
    process.kill(pidOf('redis-server')!, 'SIGKILL');

    const chain = chains['8453'];
    const headers = { 'X-API-KEY': gateway.apiKey, 'Content-Type': 'application/json' };
    const sign = () =>
      fetch(`${gateway.url}/v2/swap/sign`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          chainId: 8453,
          tokenIn: chain.quoteToken.address,
          tokenOut: chain.baseTokens[0].address,
          fee: '10',
          userAddress: chain.testUser.address,
        }),
      });
    const price = () => fetch(`${gateway.url}/v2/price?chainId=8453`, { headers });
    const deadline = Date.now() + 30_000;
    let last = '';
    for (;;) {
      const [p, s] = await Promise.all([price(), sign()]).catch(() => [undefined, undefined]);
      last = `price ${p?.status}, sign ${s?.status}`;
      if (p?.status === 200 && s?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`not serving again after 30 s (${last}):\n${output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(output()).toMatch(/signer exited unexpectedly \(SIGKILL\); restarting/);
    expect(output()).toMatch(/redis exited unexpectedly \(SIGKILL\); restarting/);
    expect(output()).not.toContain('stopping');
  }, 60_000);

  it('behavior: SIGINT stops every process it started within 10 seconds', async () => {
    const started = descendants(stack.pid!);
    expect(started.length).toBeGreaterThanOrEqual(8); // redis, 3 nodes, 3 indexers, signer, gateway
    const t0 = Date.now();
    const exited = new Promise<number | null>((resolve) => stack.once('exit', (code) => resolve(code)));
    stack.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    // Grandchildren (the hardhat nodes' own watchers) may take a moment after their parent.
    const deadline = Date.now() + 2_000;
    while (started.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const left = started.filter(alive).map((pid) => {
      try {
        return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`;
      } catch {
        return String(pid);
      }
    });
    expect(left).toEqual([]);
  }, 20_000);
});
