/**
 * Drill: `kill -9` of a single Redis (the shipped settings: append-only file fsynced before
 * each answer) under a paced sign load, then a restart on the same data: every signature a
 * client received has its audit record. And a Redis that writes no append-only file: the
 * signer refuses to sign (503) rather than hand out signatures whose record a restart can take.
 * (`appendfsync` is the deployment's to set: no service user may read it, docs/decisions/0020-durable-writes.md.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadReport, privateRedis, type PrivateRedis } from '@pmm/testkit';
import {
  DRILL_SIGNS_PER_SECOND,
  lostRecords,
  signerLoad,
  startDrillSigner,
  type DrillSigner,
} from '../support/sign-drill';

/** The shipped single-node settings (scripts/lib/redis.mjs, docker-compose.yml). */
const SHIPPED = ['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction'];

const dirs: string[] = [];
const servers: PrivateRedis[] = [];
let signer: DrillSigner | undefined;

afterEach(async () => {
  await signer?.close();
  signer = undefined;
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function redisWith(args: string[]): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drill-kill-'));
  dirs.push(dir);
  const server = await privateRedis({ dir, args });
  servers.push(server);
  return server;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('drill: kill -9 of Redis during a paced sign load, then a restart: every answered signature has its record', async () => {
  const redis = await redisWith(SHIPPED);
  signer = await startDrillSigner(redis.url);
  const load = signerLoad(signer.url, DRILL_SIGNS_PER_SECOND);
  await sleep(2_000);
  await redis.stop('SIGKILL');
  const killedAt = Date.now() - load.started;
  await sleep(1_000);
  await redis.start();
  await sleep(3_000);
  const result = await load.stop();
  const missing = await lostRecords(redis.url, signer.prefix, result.ok);
  const after = result.ok.filter((a) => a.at > killedAt + 1_000).length;
  console.log(loadReport('kill -9 drill', result, missing.length, `answered 200 after the restart ${after}`));
  expect(missing).toEqual([]);
  // The load really spanned the fault: signatures before it, refusals during it, signatures after it.
  expect(result.ok.filter((a) => a.at < killedAt).length).toBeGreaterThan(0);
  expect(after).toBeGreaterThan(0);
  expect(result.sent).toBeGreaterThan(result.ok.length);
}, 60_000);

it('error: a Redis that writes no append-only file gets no signature out: every answer is 503', async () => {
  const redis = await redisWith(['--appendonly', 'no']);
  signer = await startDrillSigner(redis.url);
  const load = signerLoad(signer.url, 50);
  await sleep(1_000);
  const result = await load.stop();
  console.log(loadReport('appendonly no', result, 0));
  expect(result.ok).toEqual([]);
  expect(result.statuses).toEqual({ 503: result.sent });
}, 30_000);
