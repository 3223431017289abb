/**
 * The operator's commands that write durably (`risk halt`, `keys create`) wait for the replica
 * acknowledgement as long as REDIS_DURABLE_WAIT_MS allows, even past the 2 s every command
 * connection is otherwise limited to: with a replica that is paused for 3 s and a wait of 8 s,
 * each command ends with exit 0 and its write on the replica. (Their connections were cut at 2 s,
 * and a slower replica failed the command though the write would have been confirmed in time.)
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRedis, redisKeys, redisReady } from '@pmm/core';
import { REPO_ROOT, privateReplicatedRedis, type PrivateReplicatedRedis } from '@pmm/testkit';

const run = promisify(execFile);
const PREFIX = 'pmm-durable-wait';
let nodes: PrivateReplicatedRedis;

beforeAll(async () => {
  nodes = await privateReplicatedRedis({ replicas: 1, args: ['--min-replicas-max-lag', '120'] });
}, 60_000);
afterAll(() => nodes?.stop());

/** Runs an operator command (its built entry point) in replica mode; its exit code and output. */
async function operatorCommand(entry: string, argv: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(REPO_ROOT, entry), ...argv], {
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL: nodes.url,
        REDIS_KEY_PREFIX: PREFIX,
        STACK_FILE: '/nonexistent',
        REDIS_DURABILITY: 'replica',
        REDIS_DURABLE_REPLICAS: '1',
        REDIS_DURABLE_WAIT_MS: '8000',
      },
      timeout: 30_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

/** Runs the command with the replica paused for 3 s from its start. */
async function withSlowReplica(entry: string, argv: string[]) {
  nodes.replicas[0]!.pause();
  const resume = new Promise<void>((r) =>
    setTimeout(() => {
      nodes.replicas[0]!.resume();
      r();
    }, 3_000),
  );
  const result = await operatorCommand(entry, argv);
  await resume;
  return result;
}

it('behavior: risk halt waits past 2 s for a slow replica and succeeds; the halt is on the replica', async () => {
  const result = await withSlowReplica('packages/operator/dist/risk/risk.js', [
    'halt',
    '--all',
    '--reason',
    'slow replica',
    '--by',
    'test',
  ]);
  expect(result).toMatchObject({ code: 0 });
  const replica = createRedis(nodes.replicas[0]!.url, { name: 'durable-wait-replica' });
  try {
    await redisReady(replica);
    expect(await replica.hkeys(redisKeys(PREFIX).halts())).toEqual(['all']);
  } finally {
    replica.disconnect();
  }
}, 60_000);

it('behavior: keys create waits past 2 s for a slow replica and prints the key once confirmed', async () => {
  const result = await withSlowReplica('services/gateway/dist/cli/keys.js', ['create', '--integrator', 'slowrep']);
  expect(result.code).toBe(0);
  expect(result.out).toMatch(/pmm_[A-Za-z0-9_-]{20,}/);
}, 60_000);
