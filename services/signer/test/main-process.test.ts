/**
 * The signer as a process (its build, as production runs it: testkit's spawnService): start-up
 * logs only addresses, a missing key stops start-up with a clear message and no secret, and
 * SIGTERM lets an in-flight request complete before the process exits 0.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Agent, request as httpRequest } from 'node:http';
import { createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { spawnService } from '@pmm/testkit';
import { SIGNER_SETTINGS } from '../src';
import { privateKeyToAddress } from 'viem/accounts';
import { INTERNAL_TOKEN, REDIS_URL, USER, integrator, testKey, testRegistry } from './support/fixture';

const KEYS = { 8453: testKey('main-8453'), 56: testKey('main-56'), 4663: testKey('main-4663') };
const SECRETS = [INTERNAL_TOKEN, ...Object.values(KEYS).map((k) => k.slice(2))];

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startMain(env: Record<string, string>, args: string[] = []): Proc {
  const { child, output } = spawnService('signer', { env, args });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function waitForLine(p: Proc, re: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const start = Date.now();
  for (;;) {
    const m = re.exec(p.output());
    if (m) return m;
    if (Date.now() - start > timeoutMs || p.child.exitCode !== null)
      throw new Error(`no line ${re} in output:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);
let redis: RedisClient;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { role: 'command', name: 'main-test' });
  await redisReady(redis);
  await redis.set(keys.pairs(8453), JSON.stringify(testRegistry(8453)));
  await redis.set(keys.integrator('acme'), JSON.stringify(integrator('acme')));
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
});

const baseEnv = (): Record<string, string> => ({
  REDIS_URL,
  REDIS_KEY_PREFIX: prefix,
  INTERNAL_TOKEN,
  // The shared test Redis does not fsync each write; durable writes have their own drills.
  REDIS_DURABILITY: 'none',
  PORT: '0',
  SIGNER_KEY_8453: KEYS[8453],
  SIGNER_KEY_56: KEYS[56],
  SIGNER_KEY_4663: KEYS[4663],
});

describe('main process', () => {
  it('behavior: --help lists every setting with its default (a bigint default included) and exits 0', async () => {
    const help = startMain({}, ['--help']);
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/MAX_FEE \(maxFee; default "\d+"\)/);
    for (const s of Object.values(SIGNER_SETTINGS)) expect(help.output()).toContain(`${s.env} (`);
  }, 30_000);

  it('error: a served chain without a key exits 1 with a message naming the chain and no secret', async () => {
    const env = baseEnv();
    delete env.SIGNER_KEY_56;
    const p = startMain(env);
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain(
      'signer: cannot start: chain 56 is served (SERVED_CHAINS) but has no signing key: set SIGNER_KEY_56',
    );
    for (const s of SECRETS) expect(p.output()).not.toContain(s);
  }, 30_000);

  it('behavior: SIGTERM lets an in-flight request finish, then the process exits 0; logs carry addresses only', async () => {
    const p = startMain(baseEnv());
    try {
      const port = Number((await waitForLine(p, /"message":"signer listening".*?"port":(\d+)/))[1]);
      const log = p.output();
      for (const id of [8453, 56, 4663] as const) {
        expect(log).toMatch(
          new RegExp(
            `"address":"${privateKeyToAddress(KEYS[id])}".*"backend":"(libsecp256k1|noble)".*"chainId":${id}|"chainId":${id}.*"address":"${privateKeyToAddress(KEYS[id])}"`,
          ),
        );
      }

      const body = JSON.stringify({
        tokenIn: testRegistry(8453).baseTokens[0]!.address,
        tokenOut: testRegistry(8453).quoteToken.address,
        fee: '30',
        userAddress: USER,
      });
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let response = '';
      socket.on('data', (d: Buffer) => (response += d.toString()));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      // Headers and half of the body: the request is in flight when SIGTERM arrives.
      socket.write(
        `POST /v2/swap/sign HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Internal-Token: ${INTERNAL_TOKEN}\r\nX-Integrator-Id: acme\r\nX-Request-Id: drain-1\r\n\r\n${body.slice(0, 20)}`,
      );
      await new Promise((r) => setTimeout(r, 200));
      p.child.kill('SIGTERM');
      await waitForLine(p, /"message":"shutting down"/);
      // New connections are refused while draining.
      const refused = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);
      socket.write(body.slice(20));
      await closed;
      expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(response).toMatch(/\r\nx-request-id: drain-1\r\n/i);
      const json = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as {
        verificationData: string;
        timestamp: number;
      };
      expect(json.verificationData).toMatch(/^0x[0-9a-f]+$/);
      expect(await p.exited).toBe(0);
      expect(p.output()).toContain('"message":"stopped"');
      for (const s of SECRETS) expect(p.output()).not.toContain(s);
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  }, 30_000);

  // The gateway holds keep-alive connections to the signer: an idle one must not hold SIGTERM.
  it("behavior: SIGTERM with the gateway's keep-alive connection open exits 0 promptly", async () => {
    const p = startMain(baseEnv());
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const port = Number((await waitForLine(p, /"message":"signer listening".*?"port":(\d+)/))[1]);
      const body = JSON.stringify({
        tokenIn: testRegistry(8453).baseTokens[0]!.address,
        tokenOut: testRegistry(8453).quoteToken.address,
        fee: '30',
        userAddress: USER,
      });
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v2/swap/sign',
            method: 'POST',
            agent,
            headers: {
              'x-internal-token': INTERNAL_TOKEN,
              'x-integrator-id': 'acme',
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).toBe(200);
      // The socket is now idle in the agent's pool, as between two quotes.
      expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
      const started = Date.now();
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      // Well inside the 10 s drain timeout: the idle connection does not hold the server open.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(p.output()).toContain('"message":"stopped"');
    } finally {
      agent.destroy();
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  }, 30_000);
});
