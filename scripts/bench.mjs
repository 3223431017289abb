// `npm run bench [filter]`: runs every `*.bench.ts` under packages/*/bench and services/*/bench,
// one at a time (they measure the machine, so they must not overlap), with a private Redis
// unless REDIS_URL is set. Each benchmark prints its own figures and ratios.
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { stackRedisPersistence, startPrivateRedis } from './lib/redis.mjs';

const filter = process.argv[2] ?? '';
const files = [];
for (const group of ['packages', 'services']) {
  for (const pkg of readdirSync(path.join(root, group))) {
    const dir = path.join(root, group, pkg, 'bench');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith('.bench.ts')) files.push(path.join(dir, f));
  }
}
// The soak (a million requests, many minutes) runs only when its own name is the filter
// (`npm run bench soak`), not when another filter (say `stack`) matches its path. The filter
// matches the path inside the repository (a checkout under /work/wt-stream would otherwise
// match "stream" in every benchmark's path).
const isSoak = (f) => path.basename(f).startsWith('soak.');
const selected = files.filter(
  (f) =>
    path.relative(root, f).includes(filter) && (!isSoak(f) || (path.basename(f).includes(filter) && filter !== '')),
);
if (selected.length === 0) {
  console.error(`no benchmark matches "${filter}"`);
  process.exit(1);
}
// As shipped (the stack's persistence settings): the append-only file fsynced before each
// answer, which the signer checks (REDIS_DURABILITY=auto); in a folder removed at the end.
const redisDir = process.env.REDIS_URL ? undefined : mkdtempSync(path.join(tmpdir(), 'bench-redis-'));
const redis = redisDir ? await startPrivateRedis(['--dir', redisDir, ...stackRedisPersistence()]) : undefined;
let failed = 0;
for (const file of selected) {
  console.log(`\n=== ${path.relative(root, file)}`);
  const r = spawnSync(process.execPath, ['-r', path.join(root, 'scripts/lib/ts-register.cjs'), file], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, REDIS_URL: process.env.REDIS_URL ?? redis.url },
  });
  if (r.status !== 0) failed++;
}
await redis?.stop();
if (redisDir) rmSync(redisDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
