/**
 * Drill: one of the two Redis servers stalls under signing load. The gateway and the signer run
 * as `npm start` runs them (support/served-pair.ts), on two private servers: the records'
 * (`REDIS_RECORDS_URL`, fsynced at every write) and the rebuildable one (`REDIS_URL`). Each server
 * in turn is frozen with SIGSTOP (its connections stay open and nothing is answered, as a stalled
 * host or a full disk looks) for STALL_MS while ten keep-alive clients keep signing, then let go.
 *
 * Pinned, for either server:
 * - every answer is a signed quote or a 503 SERVICE_UNAVAILABLE in the envelope, and comes within
 *   the gateway's request timeout: no hang, no other 5xx, no cut connection;
 * - every signed quote answered has its audit record, stalled server or not;
 * - signing comes back within seconds of the server going on, with nothing restarted.
 * And for the records' server: once it has been stalled for FAIL_CLOSED_MS, nothing is signed
 * (a signature whose record cannot be written is never answered). A stall of the rebuildable
 * server may go unfelt: the pair's integrator has a limit reserved in batches and the signer
 * reads its registries from memory, so the signs it answers need nothing from that server.
 */
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AUDIT_ENTRY_FIELD,
  STACK_REBUILDABLE_REDIS_PERSISTENCE,
  STACK_REDIS_PERSISTENCE,
  createRedis,
  parseAuditRecord,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { USER, startServedPair, tokensOf, type ServedPair } from '../support/served-pair';

const REQUEST_TIMEOUT_MS = 4_000;
const STALL_MS = 6_000;
/** How long a stall of the records' server may take to stop every signature (timeouts, retries). */
const FAIL_CLOSED_MS = 3_000;
/** How soon after the server goes on a sign must be answered 200 again. */
const RECOVERY_MS = 15_000;
const CLIENTS = 10;

interface Answer {
  id: string;
  /** 0: no answer (a transport error or the client's own timeout). */
  status: number;
  code?: string;
  sentAt: number;
  ms: number;
}

let pair: ServedPair;
let records: PrivateRedis;
let rebuildable: PrivateRedis;
let recordsClient: RedisClient;
const dirs: string[] = [];
let seq = 0;

const { quote, bases } = tokensOf(8453);
const BODY = JSON.stringify({ chainId: 8453, tokenIn: quote, tokenOut: bases[0], fee: '30', userAddress: USER });

function sign(agent: Agent): Promise<Answer> {
  const id = `stall-${++seq}`;
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const done = (status: number, code?: string) => resolve({ id, status, code, sentAt, ms: Date.now() - sentAt });
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port: pair.gatewayPort,
        method: 'POST',
        path: '/v2/swap/sign',
        headers: { 'x-api-key': pair.apiKey, 'x-request-id': id, 'content-type': 'application/json' },
        // Well past the gateway's own timeout: an answer slower than this is a hang.
        timeout: REQUEST_TIMEOUT_MS + 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode === 200) return done(200);
          try {
            const json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } };
            done(res.statusCode ?? 0, json.error?.code);
          } catch {
            done(res.statusCode ?? 0, 'NOT_JSON');
          }
        });
        res.on('error', () => done(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', () => done(0));
    req.end(BODY);
  });
}

/** CLIENTS keep-alive clients signing one request after another until `until(answers so far)` says stop. */
async function load(until: (answers: readonly Answer[]) => boolean): Promise<Answer[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const answers: Answer[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!until(answers)) {
        const answer = await sign(agent);
        answers.push(answer);
        // A refusal comes at once: pace the retries as a client would, not in a tight loop.
        if (answer.status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
    }),
  );
  agent.destroy();
  return answers;
}

/** The client request ids of every audit record of chain 8453. */
async function recordedIds(): Promise<Set<string>> {
  const entries = (await recordsClient.xrange(redisKeys(pair.prefix).audit(8453), '-', '+')) as [string, string[]][];
  return new Set(
    entries.map(([, fields]) => parseAuditRecord(fields[fields.indexOf(AUDIT_ENTRY_FIELD) + 1]!).clientRequestId ?? ''),
  );
}

async function server(persistence: readonly string[]): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drill-stall-'));
  dirs.push(dir);
  return privateRedis({ dir, args: [...persistence] });
}

beforeAll(async () => {
  records = await server(STACK_REDIS_PERSISTENCE);
  rebuildable = await server(STACK_REBUILDABLE_REDIS_PERSISTENCE);
  pair = await startServedPair({
    redisUrl: rebuildable.url,
    redisRecordsUrl: records.url,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  recordsClient = createRedis(records.url, { name: 'drill-stall' });
  await redisReady(recordsClient);
}, 120_000);

afterAll(async () => {
  records?.resume();
  rebuildable?.resume();
  recordsClient?.disconnect();
  await pair?.close();
  await Promise.all([records?.stop(), rebuildable?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['the records’ server', () => records, true],
  ['the rebuildable server', () => rebuildable, false],
] as const)('%s stalls under signing load', (_name, stalled, holdsRecords) => {
  it('error: every answer is a signed quote or a 503 in the envelope, in time; every signed quote has its record; signing comes back', async () => {
    // Signing works before the stall.
    const warmEnd = Date.now() + 1_500;
    const before = await load(() => Date.now() > warmEnd);
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((a) => a.status !== 200)).toEqual([]);

    let pausedAt = 0;
    let resumedAt = 0;
    const afterResume = (a: Answer) => resumedAt > 0 && a.sentAt >= resumedAt && a.status === 200;
    const timer = setTimeout(() => {
      pausedAt = Date.now();
      stalled().pause();
      setTimeout(() => {
        stalled().resume();
        resumedAt = Date.now();
      }, STALL_MS);
    }, 500);
    const deadline = Date.now() + 500 + STALL_MS + RECOVERY_MS;
    // Until a sign sent after the server went on is answered 200 (or the deadline: failed below).
    const during = await load((answers) => Date.now() > deadline || answers.some(afterResume)).finally(() =>
      clearTimeout(timer),
    );
    expect(resumedAt).toBeGreaterThan(0);
    // Every answer: a signed quote, or 503 SERVICE_UNAVAILABLE in the envelope; none slower than the timeout.
    const odd = during.filter((a) => a.status !== 200 && !(a.status === 503 && a.code === 'SERVICE_UNAVAILABLE'));
    expect(odd).toEqual([]);
    const slow = during.filter((a) => a.ms > REQUEST_TIMEOUT_MS + 1_000);
    expect(slow).toEqual([]);
    // Signing came back without a restart.
    expect(during.some(afterResume)).toBe(true);
    if (holdsRecords) {
      expect(during.some((a) => a.status === 503)).toBe(true);
      const signedDeepInStall = during.filter(
        (a) => a.status === 200 && a.sentAt >= pausedAt + FAIL_CLOSED_MS && a.sentAt + a.ms < resumedAt,
      );
      expect(signedDeepInStall).toEqual([]);
    }
    // Every signed quote a client received has its audit record.
    const recorded = await recordedIds();
    const missing = [...before, ...during].filter((a) => a.status === 200 && !recorded.has(a.id));
    expect(missing).toEqual([]);
  }, 60_000);
});
