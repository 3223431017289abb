/**
 * The halts' scope rules (halt-scope.ts), pure: which halts cover a sign request, what they
 * leave of a book, a scope's name, and a stored record's parsing.
 */
import {
  bookHalt,
  haltedError,
  haltScopeKind,
  haltScopeName,
  parseActiveHalts,
  parseHaltRecord,
  scopeCoversSign,
} from '@pmm/core';

const WETH = `0x${'bb'.repeat(20)}`;
const QUOTE = `0x${'aa'.repeat(20)}`;
const USER = `0x${'cc'.repeat(20)}`;
const sign = {
  chainId: 8453,
  tokenIn: QUOTE.toUpperCase().replace('0X', '0x'),
  tokenOut: WETH,
  integratorId: 'acme',
  userAddress: USER.toUpperCase().replace('0X', '0x'),
};
const halt = (scope: object) => ({ scope, reason: 'r', by: 'a', at: 1 });

describe('halt scopes', () => {
  it.each([
    ['everything', {}, true],
    ['its chain', { chainId: 8453 }, true],
    ['another chain', { chainId: 56 }, false],
    ['its pair (the base token, either side)', { chainId: 8453, pair: WETH }, true],
    ['the same base token on another chain', { chainId: 56, pair: WETH }, false],
    ['another pair', { chainId: 8453, pair: `0x${'dd'.repeat(20)}` }, false],
    ['its integrator', { integratorId: 'acme' }, true],
    ['another integrator', { integratorId: 'other' }, false],
    ['its user (any case)', { userAddress: USER }, true],
    ['another user', { userAddress: `0x${'ee'.repeat(20)}` }, false],
    ['its integrator on its chain', { chainId: 8453, integratorId: 'acme' }, true],
    ['its integrator on another chain', { chainId: 56, integratorId: 'acme' }, false],
  ])('behavior: a halt of %s covers the request: %s', (_name, scope, covers) => {
    expect(scopeCoversSign(scope, sign)).toBe(covers);
  });

  it('behavior: a book is refused by a halt of everything, its chain or its integrator; a pair halt withholds the pair; a user halt leaves it', () => {
    expect(bookHalt([halt({ userAddress: USER })], 8453, 'acme')).toEqual({ pairs: new Set() });
    expect(bookHalt([halt({ chainId: 8453, pair: WETH })], 8453, 'acme')).toEqual({ pairs: new Set([WETH]) });
    expect(bookHalt([halt({ chainId: 56, pair: WETH })], 8453, 'acme')).toEqual({ pairs: new Set() });
    expect(bookHalt([halt({ chainId: 8453 })], 8453, 'acme')).toEqual({ refusedBy: 'chain' });
    expect(bookHalt([halt({ integratorId: 'acme' })], 8453, 'acme')).toEqual({ refusedBy: 'integrator' });
    expect(bookHalt([halt({ integratorId: 'acme' })], 8453, '')).toEqual({ pairs: new Set() });
    expect(bookHalt([halt({ integratorId: 'acme' })], 8453, 'other')).toEqual({ pairs: new Set() });
    expect(bookHalt([halt({})], 56, 'other')).toEqual({ refusedBy: 'all' });
  });

  it('behavior: a scope is named by its parts in a fixed order, and its kind is its narrowest part', () => {
    expect(haltScopeName({})).toBe('all');
    expect(haltScopeName({ userAddress: USER, chainId: 8453, integratorId: 'acme' })).toBe(
      `chain=8453 integrator=acme user=${USER}`,
    );
    expect(haltScopeKind({ chainId: 8453, pair: WETH })).toBe('pair');
    expect(haltScopeKind({ chainId: 8453, integratorId: 'acme' })).toBe('integrator');
  });

  it('security: the HALTED answer names the kind of scope, never the reason', () => {
    const err = haltedError('integrator');
    expect(err.status).toBe(503);
    expect(err.code).toBe('HALTED');
    expect(err.message).toBe("signing is halted for this API key's integrator by the operator; retry later");
    expect(err.headers).toEqual({ 'Retry-After': '60' });
  });

  it.each([
    ['not JSON', 'nope'],
    ['a chain id as a string', '{"scope":{"chainId":"8453"},"reason":"r","by":"a","at":1}'],
    ['a pair without its chain', `{"scope":{"pair":"${WETH}"},"reason":"r","by":"a","at":1}`],
    ['an upper-case user', `{"scope":{"userAddress":"${USER.toUpperCase()}"},"reason":"r","by":"a","at":1}`],
    ['no author', '{"scope":{},"reason":"r","at":1}'],
  ])('error: a stored halt with %s does not parse (the view then fails closed)', (_name, json) => {
    expect(() => parseHaltRecord(json)).toThrow();
  });

  it("security: a halt filed under another scope's name does not parse: a writer that may only add halts cannot narrow one (and so lift it)", () => {
    const all = { scope: {}, reason: 'r', by: 'a', at: 2 };
    const user = { scope: { userAddress: USER }, reason: 'r', by: 'ledger', at: 1 };
    expect(parseActiveHalts({ all: JSON.stringify(all), [haltScopeName(user.scope)]: JSON.stringify(user) })).toEqual([
      user,
      all,
    ]);
    expect(() => parseActiveHalts({ all: JSON.stringify(user) })).toThrow(/filed as "all" is a halt of "user=/);
  });
});
