/**
 * The limits' settings as the ledger loads them (ledger-config.ts, limit-settings.ts): off unless
 * set, each limit whole when its threshold is, refused with the setting's name when malformed
 * (and a revert share whose re-arm level is not below its trip level).
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
    LIMIT_REFERENCE_MARKOUT_FLOOR_BPS: '-30',
    LIMIT_MARKOUT_HORIZON: '5b',
    LIMIT_BELOW_QUOTE_SHARE_BPS: '5000',
    LIMIT_BELOW_QUOTE_MIN_SWAPS: '4',
  });
  expect(config.limits).toEqual({
    windowSeconds: 900,
    integratorNotional: '250000.5',
    pairNotional: '1000000',
    markout: { floorBps: -12.5, horizon: '5b', minSwaps: 20 },
    referenceMarkout: { floorBps: -30, horizon: '5b', minSwaps: 20 },
    belowQuote: { shareBps: 5000, minSwaps: 4 },
  });
});

it('behavior: the revert share with its re-arm level (half the trip level unless set) and its minimum of calls', () => {
  expect(load({ LIMIT_REVERT_SHARE_BPS: '2000' }).limits.reverts).toEqual({
    shareBps: 2000,
    rearmBps: 1000,
    minCalls: 20,
  });
  expect(
    load({ LIMIT_REVERT_SHARE_BPS: '1500', LIMIT_REVERT_REARM_BPS: '1200', LIMIT_REVERT_MIN_CALLS: '50' }).limits
      .reverts,
  ).toEqual({ shareBps: 1500, rearmBps: 1200, minCalls: 50 });
});

it('behavior: the unused share of firm signatures, the same way, with its minimum of firm signatures', () => {
  expect(load({ LIMIT_UNUSED_SHARE_BPS: '9000' }).limits.unused).toEqual({
    shareBps: 9000,
    rearmBps: 4500,
    minFirm: 50,
  });
  expect(load({ LIMIT_UNUSED_SHARE_BPS: '8000', LIMIT_UNUSED_MIN_FIRM: '10' }).limits.unused).toMatchObject({
    minFirm: 10,
  });
  expect(() => load({ LIMIT_UNUSED_SHARE_BPS: '8000', LIMIT_UNUSED_REARM_BPS: '9000' })).toThrow(
    /LIMIT_UNUSED_REARM_BPS.*must be below the trip level/,
  );
});

it('error: a re-arm level at or above the trip level, or a trip level of 0, is no hysteresis: refused', () => {
  expect(() => load({ LIMIT_REVERT_SHARE_BPS: '1000', LIMIT_REVERT_REARM_BPS: '1000' })).toThrow(
    /LIMIT_REVERT_REARM_BPS.*must be below the trip level/,
  );
  expect(() => load({ LIMIT_REVERT_SHARE_BPS: '0' })).toThrow(/LIMIT_REVERT_REARM_BPS/);
  expect(() => load({ LIMIT_REVERT_SHARE_BPS: '10001' })).toThrow('LIMIT_REVERT_SHARE_BPS');
});

it('error: a cap of 0, a negative cap, a share above 100 %, an unknown horizon name the setting', () => {
  expect(() => load({ LIMIT_INTEGRATOR_NOTIONAL: '0' })).toThrow(/LIMIT_INTEGRATOR_NOTIONAL.*leave it empty for off/);
  expect(() => load({ LIMIT_PAIR_NOTIONAL: '-5' })).toThrow('LIMIT_PAIR_NOTIONAL (limitPairNotional)');
  expect(() => load({ LIMIT_BELOW_QUOTE_SHARE_BPS: '10001' })).toThrow('LIMIT_BELOW_QUOTE_SHARE_BPS');
  expect(() => load({ LIMIT_MARKOUT_HORIZON: '2h' })).toThrow('LIMIT_MARKOUT_HORIZON (limitMarkoutHorizon)');
  expect(() => load({ LIMIT_WINDOW_SECONDS: '10' })).toThrow('LIMIT_WINDOW_SECONDS (limitWindowSeconds)');
});
