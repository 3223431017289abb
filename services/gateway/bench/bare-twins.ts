/**
 * `npm run bench gateway`'s bare twins (gateway.bench.ts), each server child a process of its
 * own forked from this file: GET answering the stored book's bytes, POST answering a signed
 * quote's, a bare keep-alive hop, the shape's floor (a hop to a POST that answers once one
 * durable write to the main Redis is answered), and the in-process composition when this
 * checkout has it (in-process.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request as httpRequest, type RequestListener } from 'node:http';
import path from 'node:path';
import { SERVICE_NODE_FLAGS, createRedis, redisKeys, redisReady } from '@pmm/core';
import { profiled } from './bench-systems';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = path.resolve(__dirname, '..', '..', '..');

/** What a server child reports once listening: the ports of the servers it runs. */
export interface Ports {
  bareGet?: number;
  barePost?: number;
  bareHop?: number;
  bareWrite?: number;
  bareHopWrite?: number;
  inProcess?: number;
}

async function listenOn(handler: RequestListener): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** Answers every request with `body`, once the request's body has been read. */
function answerWith(body: Buffer): RequestListener {
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
    });
  };
}

/** Forwards every POST over a keep-alive pool to `port` and answers its bytes: one bare hop. */
function forwardTo(port: number): RequestListener {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const upstream = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: req.url,
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const out = Buffer.concat(parts);
            res.writeHead(answer.statusCode ?? 502, {
              'Content-Type': 'application/json; charset=utf-8',
              'Content-Length': out.length,
            });
            res.end(out);
          });
        },
      );
      upstream.on('error', () => {
        res.statusCode = 502;
        res.end();
      });
      upstream.end(body);
    });
  };
}

/**
 * The bare twins: GET answering the stored book's bytes, POST answering a signed quote's, a bare
 * hop, and a bare hop to `bareWritePort` (the other bare child, serveBareWrite).
 */
async function serveBare(prefix: string, signed: Buffer, bareWritePort: number): Promise<Ports> {
  const redis = createRedis(REDIS_URL, { name: 'bench' });
  await redisReady(redis);
  const book = Buffer.from((await redis.get(redisKeys(prefix).book(8453)))!, 'utf8');
  redis.disconnect();
  const barePost = await listenOn(answerWith(signed));
  return {
    bareGet: await listenOn((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': book.length });
      res.end(book);
    }),
    barePost,
    bareHop: await listenOn(forwardTo(barePost)),
    bareHopWrite: await listenOn(forwardTo(bareWritePort)),
  };
}

/**
 * The shape's floor, with serveBare's hop in front of it: a bare POST in a process of its own
 * that answers a signed quote's bytes once one write to the main Redis is answered (a SET of a
 * few bytes: with the append-only file fsynced, Redis answers it after the fsync, as it answers
 * the signer's audit write). A gateway, a signer and one durable write, doing nothing else: what
 * any implementation of this shape pays on this machine. Its writes add about 60 bytes each to
 * the append-only file the audit footprint measures (under 1 % of it).
 */
async function serveBareWrite(prefix: string, signed: Buffer): Promise<Ports> {
  const redis = createRedis(REDIS_URL, { role: 'command', name: 'bench-bare-write' });
  await redisReady(redis);
  const key = `${prefix}:bench-floor-write`;
  const bareWrite = await listenOn((req, res) => {
    req.resume();
    req.on('end', () => {
      redis.set(key, '1').then(
        () => {
          res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': signed.length });
          res.end(signed);
        },
        () => {
          res.statusCode = 503;
          res.end();
        },
      );
    });
  });
  return { bareWrite };
}

/** The in-process composition (in-process.ts), loaded only when it exists in this checkout. */
async function serveInProcess(prefix: string): Promise<Ports> {
  const { startInProcessSign } = (await import('./in-process')) as typeof import('./in-process');
  return { inProcess: await startInProcessSign({ redisUrl: REDIS_URL, prefix }) };
}

/** Runs a server child: `role` is serve-bare, serve-bare-write or serve-inprocess. */
async function serve(role: string, prefix: string, signed?: string, bareWritePort?: string): Promise<void> {
  const ports: Ports =
    role === 'serve-bare'
      ? await serveBare(prefix, Buffer.from(signed!, 'base64'), Number(bareWritePort))
      : role === 'serve-bare-write'
        ? await serveBareWrite(prefix, Buffer.from(signed!, 'base64'))
        : await serveInProcess(prefix);
  // A clean exit on SIGTERM, so that a profiled run writes its profile (cpu-profile-hook.cjs).
  process.once('SIGTERM', () => process.exit(0));
  process.send!(ports);
}

const children = new Set<ChildProcess>();

/** Forks a server child (this file, `serve …`) and waits for its ports. */
export async function startChild(args: string[]): Promise<{ child: ChildProcess; ports: Ports }> {
  const child = fork(__filename, args, {
    // The servers run with the V8 flags production uses (bare server included, for fairness).
    execArgv: [...SERVICE_NODE_FLAGS, '-r', path.join(ROOT, 'scripts/lib/ts-register.cjs')],
    env: { ...process.env, ...profiled(args[0]!) },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const ports = await new Promise<Ports>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ports));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  return { child, ports };
}

/** Stops a child and waits for its exit (its CPU profile is written by then). */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Whether this checkout has the in-process composition (it is measured when it does). */
export function hasInProcess(): boolean {
  try {
    require.resolve('./in-process');
    return true;
  } catch {
    return false;
  }
}

/** Stops every server child at once, without waiting (a failed run's clean-up). */
export function stopChildren(): void {
  for (const child of children) child.kill('SIGTERM');
}

if (require.main === module) void serve(process.argv[2]!, process.argv[3]!, process.argv[4], process.argv[5]);
