import fc from 'fast-check';
import { findDuplicateKey } from '@pmm/protocol';

describe('findDuplicateKey', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"b":{"c":1,"c":2}}', 'c'],
    ['[{"a":1},{"b":2,"b":3}]', 'b'],
    ['{"f\\u0065e":1,"fee":2}', 'fee'],
    ['{ "a" : "x,\\"a\\":" , "a" : 1 }', 'a'],
    ['{"":1,"":2}', ''],
    ['{"a":1,"b":"x","a":":"}', 'a'],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
  ])('error: %s has the duplicate %j', (text, key) => {
    expect(findDuplicateKey(text, JSON.parse(text))).toBe(key);
  });

  it.each([
    '{}',
    '[]',
    '"a"',
    '1',
    '{"a":{"a":{"a":1}}}',
    '{"a":[1,"a",{"a":2}],"b":"a"}',
    '[{"a":1},{"a":2}]',
    '{"a\\"b":1,"a":2,"b":"\\\\"}',
    // colons inside strings outnumber the keys: the count cannot clear it, the scan does
    '{"a":"1:2","b":{"c":"::"}}',
    '{"__proto__":{"a":1},"a":2}',
  ])('behavior: %s has none', (text) => {
    expect(findDuplicateKey(text, JSON.parse(text))).toBeUndefined();
  });

  it('behavior: deep nesting is counted without recursion', () => {
    const text = `${'['.repeat(50_000)}{"a":1}${']'.repeat(50_000)}`;
    expect(findDuplicateKey(text, JSON.parse(text))).toBeUndefined();
  });

  it('property: finds a duplicate exactly when some object repeats a decoded key (seed 10)', () => {
    // Built as trees and rendered as text: JSON.stringify cannot repeat a key.
    type Node = { leaf: string } | { items: Node[] } | { entries: [string, Node][] };
    const key = fc.constantFrom('a', 'b', 'fee', 'f\\u0065e', 'x\\"y', '');
    const { node } = fc.letrec<{ node: Node }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.integer(), fc.string(), fc.constant(null)).map((v) => ({ leaf: JSON.stringify(v) })),
        fc.array(tie('node'), { maxLength: 4 }).map((items) => ({ items })),
        fc.array(fc.tuple(key, tie('node')), { maxLength: 4 }).map((entries) => ({ entries })),
      ),
    }));
    const render = (n: Node): string =>
      'leaf' in n
        ? n.leaf
        : 'items' in n
          ? `[${n.items.map(render).join(',')}]`
          : `{${n.entries.map(([k, v]) => `"${k}" : ${render(v)}`).join(' , ')}}`;
    const hasDuplicate = (n: Node): boolean => {
      if ('leaf' in n) return false;
      if ('items' in n) return n.items.some(hasDuplicate);
      const names = n.entries.map(([k]) => JSON.parse(`"${k}"`) as string);
      return new Set(names).size !== names.length || n.entries.some(([, v]) => hasDuplicate(v));
    };
    fc.assert(
      fc.property(node, (n) => {
        const text = render(n);
        expect(findDuplicateKey(text, JSON.parse(text)) !== undefined).toBe(hasDuplicate(n));
      }),
      { seed: 10, numRuns: 2_000 },
    );
  });
});
