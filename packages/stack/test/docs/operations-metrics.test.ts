/**
 * docs/operations/monitoring.md's metrics table and alert examples name only metrics the services really
 * expose, and name every one of them: the names are read from each service's /metrics answer
 * (the gateway's operator app and a started signer over a real Redis; the indexer's and the
 * ledger's registries, which their operator servers serve as they are). Every indexer and ledger
 * series carries its `chain` label.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createLogger, createRedis, redisReady, type RedisClient } from '@pmm/core';
import { createApp as createGateway, loadGatewayConfig, type Gateway } from '@pmm/gateway';
import { createIndexerMetrics } from '../../../../services/indexer/src/metrics';
import { createLedgerMetrics } from '../../../../services/indexer/src/ledger/ledger-metrics';
import { loadSignerConfig, startSigner, type RunningSigner } from '@pmm/signer';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const root = path.resolve(__dirname, '..', '..', '..', '..');
const logger = createLogger({ service: 'test', level: 'error' });
const prefix = `metrics-docs-${process.pid}-${Date.now()}`;
const token = 'metrics-docs-internal-token-0123456789';

/** Metric family names of a Prometheus text exposition (from its # TYPE lines). */
const families = (text: string) => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
/** Only the service-specific families (Node's default process_/nodejs_ metrics are not documented). */
const own = (names: Set<string>) => [...names].filter((n) => /^(gateway|signer|indexer|ledger|http)_/.test(n)).sort();

let gateway: Gateway;
let signer: RunningSigner;
const clients: RedisClient[] = [];
const exposed = new Set<string>();
let indexerText = '';
let ledgerText = '';

beforeAll(async () => {
  const redis = createRedis(REDIS_URL, { name: 'metrics-docs' });
  const subscriber = createRedis(REDIS_URL, { role: 'subscriber', name: 'metrics-docs-sub' });
  clients.push(redis, subscriber);
  await redisReady(redis);
  const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, INTERNAL_TOKEN: token };
  gateway = createGateway({ config: loadGatewayConfig({ env, file: {} }), redis, subscriber, logger });
  await gateway.start();
  signer = await startSigner(
    loadSignerConfig({
      // The shared test Redis does not fsync each write; durable writes have their own drills.
      env: {
        ...env,
        REDIS_DURABILITY: 'none',
        PORT: '0',
        SERVED_CHAINS: '8453',
        SIGNER_KEY_8453: `0x${'11'.repeat(32)}`,
      },
      file: {},
    }),
    logger,
  );
  const indexer = createIndexerMetrics({ chainId: 8453, defaultMetrics: false });
  indexerText = await indexer.registry.metrics();
  ledgerText = await createLedgerMetrics({ chainId: 8453, defaultMetrics: false }).metrics.registry.metrics();
  const texts = [
    ledgerText,
    (await request(gateway.opsApp).get('/metrics')).text,
    await (await fetch(`http://127.0.0.1:${signer.served.port}/metrics`)).text(),
    indexerText,
  ];
  for (const t of texts) for (const name of families(t)) exposed.add(name);
});

afterAll(async () => {
  await gateway?.close();
  await signer?.close();
  for (const c of clients) c.disconnect();
});

function documented(): Set<string> {
  const doc = readFileSync(path.join(root, 'docs', 'operations', 'monitoring.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Metrics and alerts'));
  const text = section.slice(0, section.indexOf('\n## ', 5));
  // Histogram series (_bucket/_sum/_count) in alert expressions name their family.
  return new Set(
    [...text.matchAll(/\b((?:gateway|signer|indexer|ledger|http)_[a-z0-9_]+)/g)].map((m) =>
      m[1]!.replace(/_(bucket|sum|count)$/, ''),
    ),
  );
}

describe('docs/operations/monitoring.md metrics', () => {
  it('behavior: every metric the docs name is exposed by a service', () => {
    const unknown = [...documented()].filter((n) => !exposed.has(n));
    expect(unknown).toEqual([]);
  });

  it('behavior: every metric a service exposes is in the docs', () => {
    const docs = documented();
    expect(own(exposed).filter((n) => !docs.has(n))).toEqual([]);
  });

  it.each([
    ['indexer', () => indexerText],
    ['ledger', () => ledgerText],
  ])('behavior: every %s series carries the chain label', (_name, text) => {
    const series = text()
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(series.length).toBeGreaterThan(0);
    for (const line of series) expect(line).toMatch(/[{,]chain="8453"[,}]/);
  });
});
