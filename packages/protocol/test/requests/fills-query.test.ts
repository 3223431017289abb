/**
 * The query of `GET /v2/fills` (pure): the period and the cursor as sent, checked in the
 * documented order (an unknown parameter before any value; chainId, from, to, cursor; then the
 * period), each failure named by its parameter; nothing coerced (a repeated parameter, a sign, a
 * fraction, an ISO date are refused, never read as something else).
 */
import { ApiError, FILLS_MAX_PERIOD_SECONDS, parseFillsQuery } from '@pmm/protocol';

const FROM = 1_767_225_600;
const period = { from: String(FROM), to: String(FROM + 3_600) };

function refusal(query: Record<string, unknown>): { code: string; message: string } {
  try {
    parseFillsQuery(query);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('accepted');
}

describe('parseFillsQuery', () => {
  it('behavior: the period, the chain (8453 when omitted or 0) and the cursor as sent', () => {
    expect(parseFillsQuery(period)).toEqual({ chainId: 8453, from: FROM, to: FROM + 3_600 });
    expect(parseFillsQuery({ ...period, chainId: '56', cursor: '1767225600123-4' })).toEqual({
      chainId: 56,
      from: FROM,
      to: FROM + 3_600,
      cursor: '1767225600123-4',
    });
    expect(parseFillsQuery({ ...period, chainId: '0' }).chainId).toBe(8453);
    expect(parseFillsQuery({ from: '0', to: String(FILLS_MAX_PERIOD_SECONDS) })).toMatchObject({ from: 0 });
  });

  it.each([
    [
      { ...period, integrator: 'beta' },
      'UNSUPPORTED_FIELD',
      'integrator: unsupported query parameter (defined: chainId, from, to, cursor)',
    ],
    // Unknown before any malformed value.
    [
      { from: 'x', chainid: '56' },
      'UNSUPPORTED_FIELD',
      'chainid: unsupported query parameter (defined: chainId, from, to, cursor)',
    ],
    [{}, 'VALIDATION_ERROR', 'from: is required'],
    [{ from: period.from }, 'VALIDATION_ERROR', 'to: is required'],
    // chainId first, then from, to, cursor.
    [
      { chainId: '-1', from: 'x' },
      'VALIDATION_ERROR',
      'chainId: must be a base-10 unsigned integer (ASCII digits only)',
    ],
    [{ from: '2026-01-01', to: 'x' }, 'VALIDATION_ERROR', 'from: must be Unix seconds (ASCII digits only, at most 12)'],
    [{ from: [period.from, period.from], to: period.to }, 'VALIDATION_ERROR', 'from: must be given at most once'],
    [
      { from: period.from, to: '1767229200.5' },
      'VALIDATION_ERROR',
      'to: must be Unix seconds (ASCII digits only, at most 12)',
    ],
    [
      { from: period.from, to: '1'.repeat(13) },
      'VALIDATION_ERROR',
      'to: must be Unix seconds (ASCII digits only, at most 12)',
    ],
    [
      { ...period, cursor: 'abc' },
      'VALIDATION_ERROR',
      'cursor: must be the `next` of an earlier page (`<digits>-<digits>`)',
    ],
    [
      { ...period, cursor: '' },
      'VALIDATION_ERROR',
      'cursor: must be the `next` of an earlier page (`<digits>-<digits>`)',
    ],
    [{ from: period.to, to: period.from }, 'VALIDATION_ERROR', 'to: must be after from'],
    [{ from: period.from, to: period.from }, 'VALIDATION_ERROR', 'to: must be after from'],
    [
      { from: period.from, to: String(FROM + FILLS_MAX_PERIOD_SECONDS + 1) },
      'VALIDATION_ERROR',
      'to: must be at most 86400 s (a day) after from',
    ],
  ])('error: %j is %s', (query, code, message) => {
    expect(refusal(query)).toEqual({ code, message });
  });
});
