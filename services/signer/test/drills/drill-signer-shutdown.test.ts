/**
 * Drill: the signer shuts down (what SIGTERM and SIGINT run: drain the HTTP server, then close
 * Redis) in the middle of a paced sign load on keep-alive connections, as the gateway sends it.
 * The shutdown ends; every signature a client received has its audit record; no request is
 * answered with an error; nothing is signed after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadReport, privateRedis, settlesWithin, type PrivateRedis, type SignLoad } from '@pmm/testkit';
import { lostRecords, signerLoad, startDrillSigner, type DrillSigner } from '../support/sign-drill';

// The append-only file goes here, not into the working directory.
const dir = mkdtempSync(path.join(tmpdir(), 'drill-shutdown-'));
let redis: PrivateRedis | undefined;
let signer: DrillSigner | undefined;
let load: SignLoad | undefined;

afterAll(async () => {
  await load?.stop();
  signer?.signer.served.server.closeAllConnections();
  await signer?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('drill: a shutdown during a paced sign load ends; every answered signature has its record, no error answered', async () => {
  redis = await privateRedis({ dir, args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  signer = await startDrillSigner(redis.url);
  load = signerLoad(signer.url, 1_000);
  await sleep(1_500);
  const closingAt = Date.now() - load.started;
  const inFlight = load.inFlight();
  // A keep-alive client that keeps sending once held the drain open for ever.
  const closed = await settlesWithin(signer.close(), 10_000);
  expect(closed).toBe(true);
  const closedAt = Date.now() - load.started;
  await sleep(500);
  const result = await load.stop();
  const missing = await lostRecords(redis.url, signer.prefix, result.ok);
  console.log(
    loadReport(
      'shutdown drill',
      result,
      missing.length,
      `in flight at the shutdown ${inFlight}, which took ${closedAt - closingAt} ms`,
    ),
  );
  expect(missing).toEqual([]);
  expect(result.ok.filter((a) => a.at < closingAt).length).toBeGreaterThan(0);
  // Answered 200 or not at all (refused at connect once closed): never a 5xx for the drain.
  expect(Object.keys(result.statuses).filter((s) => s !== '200' && s !== 'error')).toEqual([]);
  expect(result.ok.filter((a) => a.at > closedAt)).toEqual([]);
  expect(result.statuses.error).toBeGreaterThan(0);
}, 60_000);
