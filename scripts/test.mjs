// The README's test command (after ensure.mjs): type-check the tests, lint, check formatting, then run every
// jest test against a real Redis (REDIS_URL, or a private redis-server started here) and
// print one plain summary line that CI can read: `Tests: N passed, N failed`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { startPrivateRedis } from './lib/redis.mjs';

const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const step = (label, cmd, args, env = process.env) => {
  console.log(`[test] ${label}`);
  return spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env }).status ?? 1;
};

// Programs some tests drive, from Debian's packages: said up front rather than as a failed test.
const onPath = (name) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
const missing = [
  !onPath('promtool') && 'promtool (apt-get install prometheus)',
  !existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium') &&
    'chromium (apt-get install chromium, or CHROMIUM_PATH)',
  // The PKCS#11 key tests: SoftHSM2's module and its tool, and opensc's pkcs11-tool (keys).
  !(onPath('softhsm2-util') && onPath('pkcs11-tool')) && 'softhsm2 and pkcs11-tool (apt-get install softhsm2 opensc)',
].filter(Boolean);
if (missing.length > 0) {
  console.error(`[test] missing: ${missing.join('; ')}`);
  process.exit(1);
}

if (step('type-check tests', bin('tsc'), ['-p', 'tsconfig.test.json']) !== 0) process.exit(1);
if (step('lint', bin('eslint'), ['.']) !== 0) process.exit(1);
if (step('format', bin('prettier'), ['--check', '--log-level', 'warn', '.']) !== 0) process.exit(1);

let redis;
if (!process.env.REDIS_URL) {
  redis = await startPrivateRedis();
  console.log(`[test] private redis at ${redis.url}`);
}
const results = path.join(root, '.jest-results.json');
rmSync(results, { force: true });
const jestStatus = step('jest', bin('jest'), ['--json', `--outputFile=${results}`, ...process.argv.slice(2)], {
  ...process.env,
  REDIS_URL: process.env.REDIS_URL ?? redis.url,
});
await redis?.stop();

let passed = 0;
let failed = 0;
if (existsSync(results)) {
  const summary = JSON.parse(readFileSync(results, 'utf8'));
  passed = summary.numPassedTests;
  failed = summary.numFailedTests + summary.numRuntimeErrorTestSuites;
}
console.log(`Tests: ${passed} passed, ${failed} failed`);
process.exit(jestStatus !== 0 || failed > 0 || passed === 0 ? 1 : 0);
