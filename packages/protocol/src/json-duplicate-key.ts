/**
 * Finds a key that appears twice in one JSON object. `JSON.parse` keeps the last value of a
 * duplicated key silently; a signing API must not guess which value the client meant, so a
 * request body with one is rejected (400 INVALID_JSON).
 *
 * One pass over the text, no allocation but a set of keys per object. Only for text that
 * `JSON.parse` has already accepted (the scanner relies on it being valid JSON).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The first duplicated key (decoded, as JSON.parse would see it), or undefined. */
export function findDuplicateKey(text: string): string | undefined {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      let escaped = false;
      while (end < text.length) {
        const d = text.charCodeAt(end);
        if (d === BACKSLASH) {
          escaped = true;
          end += 2;
        } else if (d === QUOTE) break;
        else end++;
      }
      if (expectKey) {
        // "f\u0065e" and "fee" are the same key once decoded.
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        const keys = open[open.length - 1]!;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      open.push(new Set());
      expectKey = true;
    } else if (c === OPEN_ARRAY) {
      open.push(null);
      expectKey = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = open[open.length - 1] instanceof Set;
    } else if (c === COLON) {
      expectKey = false;
    }
  }
  return undefined;
}
