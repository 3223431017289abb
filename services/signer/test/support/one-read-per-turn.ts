/**
 * For the tests of batched firm quotes (chain/quote-calls.ts): the book head read once for the
 * quotes that start in the same turn, so that a test's concurrent quotes reach the node-call
 * step together. Each reading alone, a loaded machine's Redis can answer them in several socket
 * reads, and the quotes of each read then make a round trip of their own: correct, but not the
 * one round trip a test of "quotes that arrive together" asserts.
 */
export function oneReadPerTurn<T>(read: (chainId: number) => Promise<T>): (chainId: number) => Promise<T> {
  let shared: Promise<T> | undefined;
  return (chainId) => {
    if (!shared) {
      shared = read(chainId);
      setImmediate(() => (shared = undefined));
    }
    return shared;
  };
}
