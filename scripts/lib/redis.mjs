// Private redis-server processes: a throw-away one for the test run (startPrivateRedis), and
// the local stack's, which keeps its data in a folder across restarts (persistentRedisArgs).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { root } from './pnpm.mjs';

const require = createRequire(import.meta.url);

// The devnet's picker (packages/devnet/src/free-port.ts: below the ephemeral range, and why),
// from its build, which every script that needs a port runs after (scripts/ensure.mjs).
export async function freePort() {
  return require(path.join(root, 'packages/devnet/dist/free-port.js')).findFreePort();
}

/** RESP encoding of one command (a password may hold any character). */
const resp = (...args) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

function ping(port, auth) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setTimeout(500);
    sock.on('connect', () => sock.write(`${auth ? resp('AUTH', auth.user, auth.password) : ''}${resp('PING')}`));
    let answer = '';
    sock.on('data', (d) => {
      answer += d.toString();
      // PONG, or an error (NOAUTH, WRONGPASS, LOADING): either ends this try. AUTH's +OK waits.
      const pong = answer.includes('+PONG');
      if (!pong && !/(^|\r\n)-/.test(answer)) return;
      sock.destroy();
      resolve(pong);
    });
    sock.on('error', () => resolve(false));
    sock.on('timeout', () => {
      sock.destroy();
      resolve(false);
    });
  });
}

/** Throws a helpful error when there is no redis-server to start. */
export function assertRedisServer() {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      'redis-server is not on PATH. Install it (Debian/Ubuntu: `apt-get install redis-server`, macOS: `brew install redis`) or set REDIS_URL to a Redis you run.',
    );
  }
}

/**
 * Arguments of a redis-server that keeps its data like production does: append-only file in
 * `dir`, never evicting, fsynced as `persistence` says (core's STACK_REDIS_PERSISTENCE or
 * STACK_REBUILDABLE_REDIS_PERSISTENCE). `configFile` (first: a config file's path must come before the options) carries
 * what must not be on a command line that `ps` shows every local user, such as `requirepass`.
 */
export function persistentRedisArgs(port, dir, configFile, persistence) {
  return [
    ...(configFile ? [configFile] : []),
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    ...persistence,
  ];
}

/**
 * The persistence settings of the stack's Redis (`npm start`'s and `npm run bench`'s): one
 * definition, packages/core/src/stack/stack-processes.ts (built by ensure.mjs before any script runs).
 */
export function stackRedisPersistence() {
  return require(path.join(root, 'packages/core/dist/stack/stack-processes.js')).STACK_REDIS_PERSISTENCE;
}

/**
 * Resolves once a redis-server answers PING on `port` (after AUTH as `auth`, { user, password },
 * an ACL user); rejects after `timeoutMs`.
 */
export async function waitForRedis(port, timeoutMs = 10_000, auth = undefined) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ping(port, auth)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs / 1000} s`);
}

/**
 * Starts a throw-away `redis-server` on a free port; resolves to { url, stop } (stop resolves once
 * it exited). `args` come after the defaults (no persistence), so they win.
 */
export async function startPrivateRedis(args = []) {
  assertRedisServer();
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 100; i++) {
    if (await ping(port)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!(await ping(port))) throw new Error(`private redis-server on port ${port} did not start`);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
