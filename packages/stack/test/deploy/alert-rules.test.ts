/**
 * The shipped monitoring files (deploy/): the alert rules pass promtool's checks and their own
 * unit tests (alerts.test.yml, alerts.daily.test.yml), the Prometheus configuration is valid, every dashboard query
 * parses, and every metric and label the rules and the dashboard name is exported by a service
 * of a running stack (as `npm start` runs it, each service scraped at the URL the stack file
 * records). A query naming a series nobody exports is silently empty: an alert that never fires.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT as ROOT, chainClients, startSystem, until, type System } from '@pmm/testkit';
import { TestTokenArtifact } from '@pmm/contracts';
import type { Hex } from 'viem';
import { exportedNames, promqlNames, unexportedNames, type Exported } from '../support/promql-names';

const PROMETHEUS = path.join(ROOT, 'deploy', 'prometheus');
const DASHBOARD = path.join(ROOT, 'deploy', 'grafana', 'dashboards', 'pmm-quote-service.json');

function promtool(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: PROMETHEUS, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool could not run (apt-get install prometheus): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  for?: string;
}
const rules: Rule[] = (
  parseYaml(readFileSync(path.join(PROMETHEUS, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);

interface Panel {
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
/** Grafana's variables, replaced by what they stand for, so that the query is plain PromQL. */
const plainPromql = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$chain', '.*');
const queries = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p.title, expr: plainPromql(t.expr) })),
);

describe('alert rules and Prometheus configuration', () => {
  it('behavior: promtool accepts the rules and passes their unit tests, and the scrape configuration', () => {
    for (const args of [
      ['check', 'rules', 'alerts.yml'],
      ['test', 'rules', 'alerts.test.yml', 'alerts.daily.test.yml'],
      ['check', 'config', 'prometheus.yml'],
    ]) {
      const { status, output } = promtool(...args);
      if (status !== 0) throw new Error(`promtool ${args.join(' ')} failed:\n${output}`);
    }
  }, 60_000);

  it('behavior: every alert says how bad it is and what to look at', () => {
    expect(rules.length).toBeGreaterThanOrEqual(15);
    for (const r of rules) {
      expect([r.alert, r.labels?.severity]).toEqual([r.alert, expect.stringMatching(/^(page|ticket)$/)]);
      expect([r.alert, r.annotations?.summary, r.annotations?.description]).toEqual([
        r.alert,
        expect.any(String),
        expect.any(String),
      ]);
    }
  });

  it('error: a unit test that expects the wrong alert fails (promtool test rules can fail)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'alert-rules-'));
    try {
      writeFileSync(path.join(dir, 'alerts.yml'), readFileSync(path.join(PROMETHEUS, 'alerts.yml')));
      const wrong = {
        rule_files: ['alerts.yml'],
        tests: [
          {
            interval: '1m',
            input_series: [{ series: 'gateway_book_available{chain="8453"}', values: '1x5' }],
            alert_rule_test: [
              { eval_time: '3m', alertname: 'BookMissing', exp_alerts: [{ exp_labels: { chain: '8453' } }] },
            ],
          },
        ],
      };
      writeFileSync(path.join(dir, 'wrong.test.yml'), JSON.stringify(wrong));
      const r = spawnSync('promtool', ['test', 'rules', 'wrong.test.yml'], { cwd: dir, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dashboard', () => {
  it('behavior: every query parses, as promtool parses a rule', () => {
    expect(queries.length).toBeGreaterThanOrEqual(20);
    const dir = mkdtempSync(path.join(tmpdir(), 'dashboard-'));
    try {
      const groups = [
        { name: 'dashboard', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) },
      ];
      writeFileSync(path.join(dir, 'queries.yml'), JSON.stringify({ groups }));
      const r = spawnSync('promtool', ['check', 'rules', 'queries.yml'], { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`a dashboard query does not parse:\n${r.stdout}${r.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dashboard datasource', () => {
  it('behavior: every panel and variable reaches Prometheus through the datasource variable, never a fixed uid', () => {
    // A fixed uid finds no data in a Grafana whose Prometheus has another (a sidecar-loaded dashboard).
    const uids: string[] = [];
    const walk = (node: unknown, inVariable: boolean): void => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n, inVariable));
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      const ds = record.datasource as { uid?: string } | undefined;
      if (ds && typeof ds === 'object' && !(inVariable && record.type === 'datasource')) uids.push(String(ds.uid));
      for (const [key, value] of Object.entries(record)) if (key !== 'datasource') walk(value, inVariable);
    };
    const raw = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      templating: { list: { name: string; type: string; query: string }[] };
    };
    walk(raw, true);
    expect(uids.length).toBeGreaterThanOrEqual(queries.length);
    expect(new Set(uids)).toEqual(new Set(['${datasource}']));
    expect(raw.templating.list[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
  });
});

describe('the names check itself', () => {
  const exported = exportedNames([
    '# TYPE gateway_book_available gauge\ngateway_book_available{chain="8453",service="gateway"} 1\n' +
      '# TYPE indexer_block_to_book_seconds histogram\nindexer_block_to_book_seconds_bucket{chain="8453",le="1"} 3\n',
  ]);
  it('error: an unexported metric, a label a metric lacks and a grouping label nobody has are each caught', () => {
    expect(unexportedNames('max by (chain) (gateway_book_available) == 0', exported)).toEqual([]);
    expect(unexportedNames('gateway_book_missing == 1', exported)).toEqual([
      'metric gateway_book_missing is not exported by any service',
    ]);
    expect(unexportedNames('gateway_book_available{chian="8453"}', exported)).toEqual([
      'label chian is not on gateway_book_available',
    ]);
    expect(unexportedNames('sum by (integrator) (gateway_book_available)', exported)).toEqual([
      'label integrator (by/on/ignoring) is on none of the metrics of the expression',
    ]);
    expect(
      unexportedNames(
        'histogram_quantile(0.99, sum by (chain, le) (rate(indexer_block_to_book_seconds_bucket[5m])))',
        exported,
      ),
    ).toEqual([]);
  });
  it('error: a syntax error is reported, not read as no names', () => {
    expect(() => promqlNames('sum by (chain (x)')).toThrow(/syntax error/);
  });
});

describe('against a running stack', () => {
  let sys: System;
  let exported: Exported;

  beforeAll(async () => {
    // The processes `npm start` runs, with its settings (testkit's startSystem).
    // The maker's ledger too; its per-integrator series exist once a swap of the integrator executed
    // (or reverted), and its fate series once a signature's window has passed: a 15 s validity
    // (routers and signer), not the shipped minute, which this test would wait out. The metrics'
    // names do not depend on it.
    sys = await startSystem({ services: ['indexer', 'signer', 'gateway', 'ledger'], quoteValiditySeconds: 15 });
    const { url, apiKey } = sys.gateway;
    const chains = [8453, 56, 4663].map((id) => {
      const c = sys.chain(id);
      return { chainId: id, quoteToken: c.quoteToken, baseTokens: c.baseTokens, testUser: c.testUser };
    });
    const headers = { 'X-API-KEY': apiKey, 'Content-Type': 'application/json' };
    // Traffic, so that the series that only exist once used are there: a price, a sign and a
    // price stream per chain held across a few blocks (fan-out is timed only with a stream open).
    const streams = chains.map((c) => {
      const abort = new AbortController();
      const done = fetch(`${url}/v2/price/stream?chainId=${c.chainId}`, { headers, signal: abort.signal })
        .then(async (res) => {
          const reader = res.body!.getReader();
          while (!(await reader.read()).done) {
            // read until aborted
          }
        })
        .catch(() => undefined);
      return { abort, done };
    });
    // The ledger judges only the signatures signed after its first block (and 2 s of clock skew):
    // 8453's sign waits for it.
    const ledger = sys.processesOf('ledger').find((p) => p.name === 'ledger 8453')!;
    await until(
      async () => /^ledger_block\{[^}]*\} [1-9]/m.test(await (await fetch(ledger.metricsUrl!)).text()),
      60_000,
      "the ledger's first block",
      200,
    );
    await new Promise((r) => setTimeout(r, 2_500));
    let calldata: Hex | undefined;
    for (const c of chains) {
      await fetch(`${url}/v2/price?chainId=${c.chainId}`, { headers });
      const signed = await fetch(`${url}/v2/swap/sign`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          chainId: c.chainId,
          tokenIn: c.quoteToken.address,
          tokenOut: c.baseTokens[0]!.address,
          fee: '10',
          userAddress: c.testUser.address,
          amountIn: '1000',
        }),
      });
      if (c.chainId === 8453) calldata = ((await signed.json()) as { calldata: Hex }).calldata;
    }
    // One swap executed on 8453, for the ledger's series.
    const c8453 = sys.chain(8453);
    const { publicClient, wallet } = chainClients(c8453);
    const user = wallet(c8453.testUser.privateKey);
    const router = c8453.contracts.router as Hex;
    await publicClient.waitForTransactionReceipt({
      hash: await user.writeContract({
        address: c8453.quoteToken.address as Hex,
        abi: TestTokenArtifact.abi,
        functionName: 'approve',
        args: [router, 1000n],
      }),
    });
    await publicClient.waitForTransactionReceipt({ hash: await user.sendTransaction({ to: router, data: calldata! }) });
    // The same call again, its allowance spent: a reverted call, for the ledger's revert series.
    await publicClient.waitForTransactionReceipt({
      hash: await user.sendTransaction({ to: router, data: calldata!, gas: 600_000n }),
    });
    // The fate series come once the signature is judged, at the first block past its deadline
    // (the validity above after the sign).
    await until(
      async () => {
        const text = await (await fetch(ledger.metricsUrl!)).text();
        return [
          /ledger_swaps_total\{/,
          /ledger_reverted_calls_total\{/,
          /ledger_firm_signatures_total\{/,
          /ledger_sign_to_execution_seconds_bucket\{/,
        ].every((series) => series.test(text));
      },
      120_000,
      'the ledger series of the swap, the reverted call and the judged signature',
      500,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const texts = await Promise.all(sys.processes.map(async (p) => (await fetch(p.metricsUrl!)).text()));
    for (const s of streams) s.abort.abort();
    await Promise.all(streams.map((s) => s.done));
    // Every process of the stack (npm start records the same ones in stack.json: stack-e2e.test.ts).
    expect(sys.processes.map((p) => p.name).sort()).toEqual([
      'gateway',
      'indexer 4663#0',
      'indexer 56#0',
      'indexer 8453#0',
      'ledger 4663',
      'ledger 56',
      'ledger 8453',
      'signer',
    ]);
    exported = exportedNames(texts);
  }, 300_000);

  afterAll(async () => {
    await sys?.stop();
  }, 20_000);

  it('behavior: every metric and label an alert rule names is exported by a service', () => {
    const problems = rules.flatMap((r) => unexportedNames(r.expr, exported).map((p) => `${r.alert}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('behavior: every metric and label a dashboard query names is exported by a service', () => {
    const problems = queries.flatMap((q) => unexportedNames(q.expr, exported).map((p) => `${q.panel}: ${p}`));
    expect(problems).toEqual([]);
  });
});
