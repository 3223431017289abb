import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '@pmm/core';
import { loadIndexerConfig } from '../src/config';

const KEY = '0x' + '11'.repeat(32);
const deployment = {
  chainId: 8453,
  wsUrl: 'ws://127.0.0.1:8545',
  contracts: {
    router: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    helper: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    verifier: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
  },
};
const env = (over: Record<string, string | undefined> = {}) => ({
  CHAIN_ID: '8453',
  CHAINS: JSON.stringify({ 8453: deployment }),
  QUOTER_KEY: KEY,
  ...over,
});
const load = (over: Record<string, string | undefined> = {}) => loadIndexerConfig({ env: env(over), file: {} });

describe('indexer config', () => {
  it('default: every pair held against its reference within 50 bps either way, 3600 s of age, back after 3 blocks, enforced', () => {
    expect(load().referenceBand).toEqual({
      maxDeviationBelowBps: 50,
      maxDeviationAboveBps: 50,
      maxAgeSeconds: 3_600,
      recoveryBlocks: 3,
      mode: 'enforce',
    });
    const c = load({
      REFERENCE_MAX_DEVIATION_BELOW_BPS: '30',
      REFERENCE_MAX_DEVIATION_ABOVE_BPS: '40',
      REFERENCE_MAX_AGE_SECONDS: '90',
      REFERENCE_RECOVERY_BLOCKS: '5',
      REFERENCE_MODE: 'watch',
    });
    expect(c.referenceBand).toEqual({
      maxDeviationBelowBps: 30,
      maxDeviationAboveBps: 40,
      maxAgeSeconds: 90,
      recoveryBlocks: 5,
      mode: 'watch',
    });
  });

  it('error: a band setting out of its bounds, or a mode that is not enforce or watch, names itself', () => {
    expect(() => load({ REFERENCE_MAX_DEVIATION_BELOW_BPS: '0' })).toThrow(/REFERENCE_MAX_DEVIATION_BELOW_BPS/);
    expect(() => load({ REFERENCE_RECOVERY_BLOCKS: '0' })).toThrow(/REFERENCE_RECOVERY_BLOCKS/);
    expect(() => load({ REFERENCE_MODE: 'off' })).toThrow(/REFERENCE_MODE.*enforce, watch/);
  });

  it('default: documented defaults', () => {
    const c = load();
    expect(c).toMatchObject({
      chainId: 8453,
      bookTtlMs: 10_000,
      registryRefreshMs: 60_000,
      heartbeatMs: 2_000,
      rpcTimeoutMs: 3_000,
      port: 8090,
      redisKeyPrefix: 'pmm',
      ladder: {},
      callGas: 0,
    });
    // Left out of the config: the chain registry's canonical Multicall3 (chain 8453).
    expect(c.deployment.contracts.multicall3).toBe('0xcA11bde05977b3631167028862bE2a173976CA11');
  });

  it('behavior: QUOTER_KEY_FILE is read when QUOTER_KEY is absent; the chains may come from CONFIG_FILE', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'indexer-config-'));
    writeFileSync(path.join(dir, 'key'), `${KEY}\n`);
    writeFileSync(
      path.join(dir, 'stack.json'),
      JSON.stringify({ chains: { 8453: { ...deployment, extra: 'ignored' } } }),
    );
    const c = loadIndexerConfig({
      env: { CHAIN_ID: '8453', QUOTER_KEY_FILE: path.join(dir, 'key'), CONFIG_FILE: path.join(dir, 'stack.json') },
    });
    expect(c.quoter).toEqual({ kind: 'hex', privateKey: KEY });
    expect(c.deployment.wsUrl).toBe('ws://127.0.0.1:8545');
  });

  it.each([
    [{ CHAIN_ID: undefined }, /CHAIN_ID \(chainId\): required/],
    [{ CHAIN_ID: '1' }, /not in the chain registry/],
    [{ CHAIN_ID: '56' }, /no deployment for CHAIN_ID 56/],
    [{ CHAINS: JSON.stringify({ 8453: { ...deployment, wsUrl: undefined } }) }, /needs wsUrl or rpcUrl/],
    [{ BOOK_TTL_MS: '4000' }, /BOOK_TTL_MS \(bookTtlMs\): must exceed/],
    [{ RECONNECT_MIN_MS: '9000' }, /RECONNECT_MIN_MS/],
    [{ LADDER: '{"WETH":{"asks":["2","1"]}}' }, /LADDER \(ladder\): WETH.asks\[1\]/],
    [{ QUOTER_KEY: undefined }, /QUOTER_KEY \(quoterKey\): required/],
  ])('error: %j is refused naming the setting', (over, message) => {
    expect(() => load(over)).toThrow(ConfigError);
    expect(() => load(over)).toThrow(message);
  });

  it('error: a bad setting never echoes the quoter key', () => {
    try {
      load({ BOOK_TTL_MS: 'x' });
      throw new Error('no error');
    } catch (err) {
      expect(String(err)).not.toContain(KEY.slice(2));
    }
  });
});
