/**
 * The limits' settings as the ledger loads them (ledger-config.ts, limit-settings.ts): off unless
 * set, each limit whole when its threshold is, refused with the setting's name when malformed.
 */
import { loadLedgerConfig } from '../../src/ledger/ledger-config';

const CONTRACTS = {
  router: '0x' + '01'.repeat(20),
  helper: '0x' + '02'.repeat(20),
  verifier: '0x' + '03'.repeat(20),
};
const load = (env: Record<string, string>) =>
  loadLedgerConfig({
    env: {
      CHAIN_ID: '8453',
      CHAINS: JSON.stringify({ 8453: { chainId: 8453, rpcUrl: 'http://127.0.0.1:8545', contracts: CONTRACTS } }),
      ...env,
    },
    file: {},
  });

it('default: every limit is off; the window is an hour; halts are confirmed as the deployment says (auto)', () => {
  const config = load({});
  expect(config.limits).toEqual({ windowSeconds: 3_600 });
  expect(config.redisDurability).toBe('auto');
});

it('behavior: each limit set is loaded whole, with its horizon and minimum of swaps', () => {
  const config = load({
    LIMIT_WINDOW_SECONDS: '900',
    LIMIT_INTEGRATOR_NOTIONAL: '250000.5',
    LIMIT_PAIR_NOTIONAL: '1000000',
    LIMIT_MARKOUT_FLOOR_BPS: '-12.5',
    LIMIT_MARKOUT_HORIZON: '5b',
    LIMIT_BELOW_QUOTE_SHARE_BPS: '5000',
    LIMIT_BELOW_QUOTE_MIN_SWAPS: '4',
  });
  expect(config.limits).toEqual({
    windowSeconds: 900,
    integratorNotional: '250000.5',
    pairNotional: '1000000',
    markout: { floorBps: -12.5, horizon: '5b', minSwaps: 20 },
    belowQuote: { shareBps: 5000, minSwaps: 4 },
  });
});

it('error: a cap of 0, a negative cap, a share above 100 %, an unknown horizon name the setting', () => {
  expect(() => load({ LIMIT_INTEGRATOR_NOTIONAL: '0' })).toThrow(/LIMIT_INTEGRATOR_NOTIONAL.*leave it empty for off/);
  expect(() => load({ LIMIT_PAIR_NOTIONAL: '-5' })).toThrow('LIMIT_PAIR_NOTIONAL (limitPairNotional)');
  expect(() => load({ LIMIT_BELOW_QUOTE_SHARE_BPS: '10001' })).toThrow('LIMIT_BELOW_QUOTE_SHARE_BPS');
  expect(() => load({ LIMIT_MARKOUT_HORIZON: '2h' })).toThrow('LIMIT_MARKOUT_HORIZON (limitMarkoutHorizon)');
  expect(() => load({ LIMIT_WINDOW_SECONDS: '10' })).toThrow('LIMIT_WINDOW_SECONDS (limitWindowSeconds)');
});
