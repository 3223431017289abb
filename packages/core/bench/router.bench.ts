/**
 * `npm run bench router`: what the HTTP shell costs per request. The same answer (a 1.5 KB JSON
 * body behind two pass-through steps, among eight routes) served three ways, each in its own
 * process under the same load (autocannon, 20 connections, from this process):
 * - bare: a node:http listener that only compares the path;
 * - router: core's route table (Express's Router as the listener, with the request frame);
 * - app: an Express application with the same routes (its defaults; etag, x-powered-by and the
 *   query parser off).
 * Printed per run: the server's CPU per request (user + system, from process.cpuUsage) and its
 * requests per second, each with its ratio to the bare twin of the same run.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type RequestListener } from 'node:http';
import autocannon from 'autocannon';
import express from 'express';
import { createLogger, requestFrame, routeTable, type Step } from '@pmm/core';

const KINDS = ['bare', 'router', 'app'] as const;
type Kind = (typeof KINDS)[number];
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40_000);
const PATHS = ['/a', '/b', '/c', '/d', '/v2/openapi.json', '/v2/swap/sign', '/healthz'];
const BODY = Buffer.from(JSON.stringify({ data: 'y'.repeat(1500) }));

const answer: Step = (_req, res) => {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', BODY.length);
  res.end(BODY);
};
const pass: Step = (_req, _res, next) => next();

function listener(kind: Kind): RequestListener {
  if (kind === 'bare') {
    return (req, res) => {
      if ((req.url ?? '').startsWith('/v2/price')) return answer(req, res, () => undefined);
      res.statusCode = 404;
      res.end();
    };
  }
  if (kind === 'router') {
    return routeTable({
      frame: requestFrame({ logger: createLogger({ service: 'bench', silent: true }) }),
      routes: [...PATHS, '/v2/price'].map((path) => ({
        path,
        methods: ['GET', 'HEAD'] as const,
        steps: [pass, pass, answer],
      })),
    });
  }
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  for (const path of [...PATHS, '/v2/price'])
    app
      .route(path)
      .get(pass, pass, answer)
      .all((_req, res) => void res.status(405).end());
  return app;
}

// ------------------------------------------------------------------ the server process
if (process.env.ROUTER_BENCH_SERVER) {
  const server = createServer(listener(process.env.ROUTER_BENCH_SERVER as Kind));
  let started = process.cpuUsage();
  let count = 0;
  server.on('request', () => count++);
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (m) => {
    if (m === 'start') {
      started = process.cpuUsage();
      count = 0;
    } else {
      const used = process.cpuUsage(started);
      process.send!({ usPerRequest: (used.user + used.system) / count });
    }
  });
} else {
  void main();
}

function message<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => child.once('message', (m) => resolve(m as T)));
}

async function measure(kind: Kind): Promise<{ usPerRequest: number; perSecond: number }> {
  const child = fork(__filename, [], {
    env: { ...process.env, ROUTER_BENCH_SERVER: kind },
    execArgv: ['-r', require.resolve('../../../scripts/lib/ts-register.cjs')],
  });
  const { port } = await message<{ port: number }>(child);
  const url = `http://127.0.0.1:${port}/v2/price?chainId=56`;
  await autocannon({ url, connections: 20, amount: 5_000 }); // warm-up
  child.send('start');
  const result = await autocannon({ url, connections: 20, amount: REQUESTS });
  child.send('stop');
  const { usPerRequest } = await message<{ usPerRequest: number }>(child);
  child.kill();
  return { usPerRequest, perSecond: result.requests.average };
}

async function main(): Promise<void> {
  console.log(`router bench: ${RUNS} runs of ${REQUESTS} requests per server, 20 connections`);
  for (let run = 1; run <= RUNS; run++) {
    const figures = {} as Record<Kind, { usPerRequest: number; perSecond: number }>;
    for (const kind of KINDS) figures[kind] = await measure(kind);
    const bare = figures.bare;
    const line = KINDS.map((k) => {
      const f = figures[k];
      const ratio =
        k === 'bare'
          ? ''
          : ` (${(f.usPerRequest / bare.usPerRequest).toFixed(2)}× CPU, ${((100 * f.perSecond) / bare.perSecond).toFixed(0)} % req/s)`;
      return `${k} ${f.usPerRequest.toFixed(1)} µs/req ${Math.round(f.perSecond)} req/s${ratio}`;
    }).join(' · ');
    console.log(`run ${run}: ${line}`);
  }
}
