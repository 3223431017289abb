/**
 * Drill: the signer process gets SIGTERM (what an operator's restart or a Kubernetes roll sends)
 * in the middle of integrators' paced sign load through the gateway, both processes as `npm start`
 * runs them (support/served-pair.ts). What a client must see:
 * - every signature it received has its audit record (the money record);
 * - every other answer is 503 SERVICE_UNAVAILABLE in the envelope, with its request id: no 500,
 *   no 502, no connection cut by the gateway;
 * - the signer exits within its drain, and nothing is signed once it is gone.
 */
import { closeRedis, createRedis, redisKeys, redisReady } from '@pmm/core';
import { ERROR_STATUS } from '@pmm/protocol';
import { AuditReader } from '@pmm/operator';
import { loadReport, missingRecords, pacedSigns, settlesWithin, until, type SignLoad } from '@pmm/testkit';
import { USER, startServedPair, tokensOf, type ServedPair } from '../support/served-pair';

const CHAIN = 8453;
/** Signs per second: enough that requests are in flight when the signal lands, on two loaded cores. */
const RATE = 300;

let pair: ServedPair | undefined;
let load: SignLoad | undefined;

afterAll(async () => {
  await load?.stop();
  await pair?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * When the signer recorded each answered signature (its audit record's time, epoch ms): what it
 * signed, as the signer saw it. The client's receive time is no measure of that: under load an
 * answer the signer gave before it exited reaches this process after the exit was seen.
 */
async function signedTimes(answers: readonly { signature: string; timestamp: number; requestId: string }[]) {
  const redis = createRedis(pair!.redisRecordsUrl, { name: 'drill-times' });
  try {
    await redisReady(redis, 15_000);
    const reader = new AuditReader(redis, redisKeys(pair!.prefix));
    const times: number[] = [];
    for (const a of answers) {
      const found = await reader.bySignature(CHAIN, a.signature, a.timestamp);
      const record = found.find((e) => e.record.clientRequestId === a.requestId)?.record;
      if (record) times.push(record.time);
    }
    return times;
  } finally {
    await closeRedis(redis);
  }
}

it("drill: the signer's SIGTERM under load through the gateway: every 200 has its record, every other answer is 503 in the envelope", async () => {
  pair = await startServedPair();
  const { quote, bases } = tokensOf(CHAIN);
  load = pacedSigns({
    url: `http://127.0.0.1:${pair.gatewayPort}/v2/swap/sign`,
    perSecond: RATE,
    headers: { 'x-api-key': pair.apiKey },
    body: (i) =>
      JSON.stringify({
        chainId: CHAIN,
        tokenIn: quote,
        tokenOut: bases[0],
        fee: String(1 + (i % 5_000)),
        userAddress: USER,
      }),
  });
  await sleep(1_500);
  // Signs answer in a few ms: wait for a moment with requests in flight, so that the signal lands on some.
  await until(() => load!.inFlight() >= 2, 5_000, 'two signs in flight', 1);
  const signalAt = Date.now() - load.started;
  const inFlight = load.inFlight();
  const exited = await settlesWithin(pair.signer.stop('SIGTERM'), 15_000);
  expect(exited).toBe(true);
  const goneWall = Date.now();
  const goneAt = goneWall - load.started;
  // The gateway keeps answering while the signer is gone.
  await sleep(1_000);
  const result = await load.stop();
  load = undefined;

  const missing = await missingRecords(
    { redisUrl: pair.redisRecordsUrl, prefix: pair.prefix, chainId: CHAIN },
    result.ok,
    'clientRequestId',
  );
  console.log(
    loadReport(
      'signer SIGTERM through the gateway',
      result,
      missing.length,
      `in flight at the signal ${inFlight}; the signer was gone ${goneAt - signalAt} ms after it`,
    ),
  );
  expect(missing).toEqual([]);
  expect(result.ok.filter((a) => a.at < signalAt).length).toBeGreaterThan(0);
  // Nothing signed once the signer was gone (by the records' own times).
  expect((await signedTimes(result.ok)).filter((t) => t > goneWall)).toEqual([]);
  // Only signed quotes and 503s in the envelope; the gateway itself never failed a connection.
  expect(Object.keys(result.statuses).sort()).toEqual(['200', '503']);
  for (const r of result.refused) {
    expect(r.answeredRequestId).toBe(r.requestId);
    expect(JSON.parse(r.body)).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), requestId: r.requestId },
    });
    expect(r.status).toBe(ERROR_STATUS.SERVICE_UNAVAILABLE);
  }
  expect(result.refused.filter((r) => r.at > goneAt).length).toBeGreaterThan(0);
}, 90_000);
