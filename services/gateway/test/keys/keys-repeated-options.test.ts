/**
 * The key CLI (keys-command.ts, core's parseCommandLine) refuses an option given twice with exit
 * 2 and writes nothing, flags included; `--origin-rate`, which its usage lets repeat (`...`), is
 * taken once per chain: two chains both kept, one chain twice refused (the last value used to be
 * kept silently).
 */
import { runKeysCommand } from '../../src/keys/keys-command';
import { harness, type Harness } from '../support/harness';

let h: Harness;

beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.cleanup());

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, h.store, (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

/** Every key under the test prefix with its serialized value. */
async function snapshot(): Promise<[string, string | null][]> {
  const keys = (await h.redis.keys(`${h.prefix}:*`)).sort();
  return Promise.all(keys.map(async (k): Promise<[string, string | null]> => [k, await h.redis.dump(k)]));
}

it('security: an option or a flag given twice is refused with exit 2, and nothing is written', async () => {
  expect((await cli('create', '--integrator', 'acme')).code).toBe(0);
  const before = await snapshot();
  for (const [argv, option] of [
    [['create', '--integrator', 'beta', '--integrator', 'gamma'], '--integrator'],
    [['create', '--integrator', 'beta', '--name', 'B', '--name', 'C'], '--name'],
    [['update', '--integrator', 'acme', '--chains', '8453', '--chains', '56'], '--chains'],
    [['update', '--integrator', 'acme', '--disable', '--disable'], '--disable'],
    [['rotate', '--integrator', 'acme', '--revoke-old', '--revoke-old'], '--revoke-old'],
    [['list', '--json', '--json'], '--json'],
    [['create', '--integrator', 'beta', '--origin-rate', '8453=1', '--origin-rate', '8453=2'], '--origin-rate'],
  ] as const) {
    const { code, out } = await cli(...argv);
    expect([argv, code]).toEqual([argv, 2]);
    expect(out).toMatch(new RegExp(`^error: ${option}(: chain 8453)? given more than once\n`));
    expect(out).not.toContain('API key:');
  }
  expect(await snapshot()).toEqual(before);
});

it('behavior: --origin-rate, documented as repeatable, takes one value per chain', async () => {
  const { code } = await cli('create', '--integrator', 'rates', '--origin-rate', '8453=1', '--origin-rate', '56=2');
  expect(code).toBe(0);
  expect((await h.store.getIntegrator('rates'))?.originRate).toEqual({ '8453': '1', '56': '2' });
});
