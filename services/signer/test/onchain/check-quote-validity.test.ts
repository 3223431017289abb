/**
 * The start-up check of QUOTE_VALIDITY_SECONDS_<id> against the router (check-quote-validity.ts),
 * on a real anvil chain with the reference router: a matching setting starts, a different one
 * stops the start naming the router's figure, a node of another chain stops it before its router
 * is believed, and what cannot be checked (no such function, no code, no node, a node that never
 * answers or redirects, no rpcUrl) is logged and the setting used as is.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { Interface } from 'ethers';
import { Writable } from 'node:stream';
import { ConfigError, createLogger, parseChainDeployments, type ChainDeployments } from '@pmm/core';
import type { ChainStack } from '@pmm/devnet';
import { freePort, startRedirectTarget, startSystem, type System } from '@pmm/testkit';
import { checkQuoteValidity, loadSignerConfig, startSigner } from '../../src';
import type { ChainSignerConfig } from '../../src/config';

let sys: System;
let chain: ChainStack;

beforeAll(async () => {
  // The chain (its private Redis unused): the check runs in this process and reads no Redis.
  sys = await startSystem({ chains: [8453], blockIntervalMs: 0, services: [] });
  chain = sys.chain(8453);
}, 120_000);

afterAll(async () => {
  await sys?.stop();
});

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: 'validity-test', stream }), lines };
}

const chainConfig = (quoteValiditySeconds: number): ChainSignerConfig => ({
  chainId: 8453,
  originRate: 0n,
  quoteValiditySeconds,
  key: { kind: 'hex', env: 'SIGNER_KEY_8453', privateKey: chain.apiSigner.privateKey },
});

const deployments = (over: { rpcUrl?: string; router?: string } = {}): ChainDeployments =>
  parseChainDeployments({
    8453: {
      chainId: 8453,
      ...('rpcUrl' in over ? (over.rpcUrl === undefined ? {} : { rpcUrl: over.rpcUrl }) : { rpcUrl: chain.rpcUrl }),
      contracts: { ...chain.contracts, router: over.router ?? chain.contracts.router },
    },
  });

describe('the quote validity checked against the router at start', () => {
  it("behavior: the devnet router's validity (60 s) matches the default setting: logged, no error", async () => {
    const { logger, lines } = capturedLogger();
    await checkQuoteValidity([chainConfig(60)], deployments(), logger);
    expect(lines).toContainEqual(
      expect.objectContaining({ message: 'quote validity matches the router', chainId: 8453 }),
    );
  });

  it("error: a setting the router contradicts stops the start, naming the setting and the router's figure", async () => {
    const { logger } = capturedLogger();
    const err = await checkQuoteValidity([chainConfig(61)], deployments(), logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `QUOTE_VALIDITY_SECONDS_8453 (quoteValiditySeconds_8453): is 61 but the router ${chain.contracts.router} says validity() = 60; set it to 60`,
    );
  });

  it('error: a node of another chain stops the start, although its router agrees with the setting', async () => {
    // A JSON-RPC node of chain 1 whose "router" answers validity() = 61, the configured value.
    const validity61 = new Interface(['function validity() view returns (uint256)']).encodeFunctionResult(
      'validity',
      [61],
    );
    const node = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        const result = method === 'eth_chainId' ? '0x1' : validity61;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      });
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
      const { logger } = capturedLogger();
      const err = await checkQuoteValidity([chainConfig(61)], deployments({ rpcUrl }), logger).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe('CHAINS (chains.8453.rpcUrl): the node serves chain 1, not 8453');
    } finally {
      node.close();
    }
  });

  it('security: a node answering a redirect is not followed: the target receives nothing, the check is warned as not made', async () => {
    const internal = await startRedirectTarget();
    const node = createHttpServer((_req, res) => res.writeHead(307, { location: internal.url }).end());
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
      const { logger, lines } = capturedLogger();
      await checkQuoteValidity([chainConfig(61)], deployments({ rpcUrl }), logger, 2_000);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'quote validity not checked against the router; deadlines use QUOTE_VALIDITY_SECONDS_8453 as set',
          reason: 'the node answered HTTP 307, a redirect: not followed',
        }),
      );
      expect(internal.reached()).toBe(0);
    } finally {
      node.close();
      await internal.close();
    }
  });

  it('edge: a contract without validity(), an address without code, no rpcUrl: warned, the setting used as is', async () => {
    const cases: [string, ChainDeployments][] = [
      ['validity() reverted', deployments({ router: chain.quoteToken.address })],
      ['validity() answered 0x', deployments({ router: chain.testUser.address })],
      ['CHAINS gives no rpcUrl for this chain', deployments({ rpcUrl: undefined })],
    ];
    for (const [reason, given] of cases) {
      const { logger, lines } = capturedLogger();
      await checkQuoteValidity([chainConfig(61)], given, logger);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'quote validity not checked against the router; deadlines use QUOTE_VALIDITY_SECONDS_8453 as set',
          reason,
        }),
      );
    }
  });

  it('fault: no node on the port, or a node that never answers: warned within the timeout, never a failed start', async () => {
    const closedPort = await freePort();
    const accepted: Socket[] = [];
    // Accepts and never answers (its sockets are destroyed at the end, or jest waits on them).
    const silent: Server = createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    try {
      for (const rpcUrl of [
        `http://127.0.0.1:${closedPort}`,
        `http://user:secret-pass@127.0.0.1:${silentPort}`,
        // A hosted node's usual forms: the provider's key in the path, or in the query.
        `http://127.0.0.1:${closedPort}/v2/provider-path-key-0123`,
        `http://127.0.0.1:${silentPort}/rpc?apikey=provider-query-key-4567`,
      ]) {
        const { logger, lines } = capturedLogger();
        const started = Date.now();
        await checkQuoteValidity([chainConfig(61)], deployments({ rpcUrl }), logger, 500);
        expect(Date.now() - started).toBeLessThan(5_000);
        const warning = lines.find((l) => l.level === 'warn');
        expect(warning).toMatchObject({ chainId: 8453, validitySeconds: 61 });
        // The node's credentials never reach the log.
        expect(JSON.stringify(lines)).not.toContain('secret-pass');
        expect(JSON.stringify(lines)).not.toMatch(/provider-(path|query)-key/);
      }
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });

  it('error: the signer itself refuses to start with a contradicted setting (ConfigError, before any port opens)', async () => {
    const config = loadSignerConfig({
      env: {
        INTERNAL_TOKEN: 'validity-test-internal-token-0123',
        SERVED_CHAINS: '8453',
        SIGNER_KEY_8453: chain.apiSigner.privateKey,
        QUOTE_VALIDITY_SECONDS_8453: '30',
        PORT: '0',
        CHAINS: JSON.stringify({ 8453: { chainId: 8453, rpcUrl: chain.rpcUrl, contracts: chain.contracts } }),
      },
      file: {},
    });
    const { logger } = capturedLogger();
    await expect(startSigner(config, logger)).rejects.toThrow(/QUOTE_VALIDITY_SECONDS_8453 .*: is 30 .* set it to 60/);
  });
});
