/**
 * The rolling markout's stored values and mean (ledger-rolling-markout.ts): a value that is not a
 * finite number (the markout of a swap with a zero leg) counts in no mean and is never written;
 * the values against the reference are kept beside those against the maker's own mid.
 */
import { parseRollingMarkout, rollingMarkoutJson, rollingMean } from '../../src';

describe('the rolling markout', () => {
  it('behavior: the mean is that of the finite values only; none when there is none', () => {
    expect(rollingMean([-10, Infinity, -30, NaN, -Infinity])).toBe(-20);
    expect(rollingMean([Infinity])).toBeNull();
    expect(rollingMean([])).toBeNull();
  });

  it('behavior: what is stored holds finite values only, never null, and reads back the same', () => {
    const json = rollingMarkoutJson({ bps: [-10, Infinity, NaN, 2.5], referenceBps: [-40, NaN] });
    expect(json).toBe('{"bps":[-10,2.5],"referenceBps":[-40]}');
    expect(parseRollingMarkout(json)).toEqual({ bps: [-10, 2.5], referenceBps: [-40] });
  });

  it('behavior: values stored before the reference had its list read back with none against it', () => {
    expect(parseRollingMarkout('{"bps":[-10,2.5]}')).toEqual({ bps: [-10, 2.5], referenceBps: [] });
    expect(() => parseRollingMarkout('{"bps":[1],"referenceBps":3}')).toThrow(
      'rolling markout: referenceBps is not a list',
    );
  });

  it('behavior: a null an older ledger stored (an infinite markout) is skipped, the rest read; anything else that is not a number is refused', () => {
    expect(parseRollingMarkout('{"bps":[-10,null,-30]}').bps).toEqual([-10, -30]);
    expect(() => parseRollingMarkout('{"bps":[-10,"x"]}')).toThrow('rolling markout: a value is not a number');
  });
});
