/**
 * The one parser of the integrator record, shared by the gateway, the signer and the key CLI.
 * Before it, the gateway read `chains: ["56"]` as "every chain" while the signer threw.
 */
import { MalformedIntegratorError, isIntegratorId, parseIntegratorRecord } from '../../src/integrators/integrator';

const USER = '0x' + 'Ab'.repeat(20);

describe('parseIntegratorRecord', () => {
  it('behavior: fills the defaults of absent optional fields and lowercases the whitelist', () => {
    expect(parseIntegratorRecord('acme', JSON.stringify({ id: 'acme', whitelist: [USER] }))).toEqual({
      id: 'acme',
      name: 'acme',
      whitelist: [USER.toLowerCase()],
      chains: [],
      rateLimit: { requests: 0, windowSeconds: 0 },
      disabled: false,
    });
  });

  it('behavior: keeps chains, limits, disabled and originRate overrides', () => {
    const record = {
      id: 'acme',
      name: 'Acme',
      whitelist: [],
      chains: [56, 8453],
      rateLimit: { requests: 10, windowSeconds: 60 },
      disabled: true,
      originRate: { '56': '1000' },
    };
    expect(parseIntegratorRecord('acme', JSON.stringify(record))).toEqual(record);
  });

  it('error: chains given as strings make the record unusable, never "every chain"', () => {
    const text = JSON.stringify({ id: 'acme', whitelist: [], chains: ['56'] });
    expect(() => parseIntegratorRecord('acme', text)).toThrow(new MalformedIntegratorError('acme', 'chains'));
  });

  it.each([
    ['not JSON', 'nope'],
    ['not an object', '[]'],
    ['id', JSON.stringify({ id: 'Has Spaces' })],
    ['whitelist', JSON.stringify({ id: 'a', whitelist: 'all' })],
    ['disabled', JSON.stringify({ id: 'a', disabled: 'no' })],
    ['rateLimit.requests', JSON.stringify({ id: 'a', rateLimit: { requests: -1 } })],
    ['originRate.56', JSON.stringify({ id: 'a', originRate: { '56': '0x10' } })],
    ['originRate.56', JSON.stringify({ id: 'a', originRate: { '56': (1n << 256n).toString() } })],
  ])('error: %s is named in the error, not the value', (reason, text) => {
    expect(() => parseIntegratorRecord('x', text)).toThrow(new MalformedIntegratorError('x', reason));
  });

  it('behavior: the id rule is the one the key CLI and the headers use', () => {
    expect(isIntegratorId('acme-1_b')).toBe(true);
    expect(isIntegratorId('-acme')).toBe(false);
    expect(isIntegratorId('a'.repeat(65))).toBe(false);
    expect(isIntegratorId(42)).toBe(false);
  });
});
