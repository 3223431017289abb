/** libuv's thread pool sized for the module sessions: raised when the environment asks for fewer threads, kept when more. */
import { sizeThreadPool } from '../../src/signing-keys/pkcs11-runtime';

describe('sizeThreadPool', () => {
  it("behavior: one thread per session plus libuv's 4; a larger UV_THREADPOOL_SIZE is kept, a smaller one raised", () => {
    const unset: NodeJS.ProcessEnv = {};
    expect(sizeThreadPool(8, unset)).toBe(12);
    expect(unset.UV_THREADPOOL_SIZE).toBe('12');
    const larger: NodeJS.ProcessEnv = { UV_THREADPOOL_SIZE: '32' };
    expect(sizeThreadPool(8, larger)).toBe(32);
    expect(larger.UV_THREADPOOL_SIZE).toBe('32');
    const smaller: NodeJS.ProcessEnv = { UV_THREADPOOL_SIZE: '2' };
    expect(sizeThreadPool(4, smaller)).toBe(8);
    expect(smaller.UV_THREADPOOL_SIZE).toBe('8');
    expect(sizeThreadPool(2_000, {})).toBe(1024);
  });

  it('behavior: no module key, no change', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(sizeThreadPool(0, env)).toBe(4);
    expect(env.UV_THREADPOOL_SIZE).toBeUndefined();
  });
});
