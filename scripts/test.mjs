// The README's test command (after ensure.mjs): type-check the tests, lint, check formatting, then run every
// jest test against a real Redis (REDIS_URL, or a private redis-server started here) and
// print one plain summary line that CI can read: `Tests: N passed, N failed`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { startPrivateRedis } from './lib/redis.mjs';

const bin = (name) => path.join(root, 'node_modules', '.bin', name);
/** A nice value of 19: the process runs only on a core nothing else wants. */
const LOWEST_PRIORITY = 19;
/**
 * Runs one step and resolves its exit status. A `held` step's output is printed whole, under its
 * label, when it ends, or once `printAfter` settles if that is later (steps that run at once would
 * interleave their lines); the others write straight through.
 */
const step = (label, cmd, args, { env = process.env, held = false, niced = false, printAfter } = {}) =>
  new Promise((resolve) => {
    if (!held) console.log(`[test] ${label}`);
    // `nice` (coreutils) sets the priority before the command starts, so every process it forks has it.
    const [file, argv] = niced ? ['nice', ['-n', String(LOWEST_PRIORITY), cmd, ...args]] : [cmd, args];
    const child = spawn(file, argv, { cwd: root, env, stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.on('error', (err) => (output += `${err.message}\n`));
    child.on('close', async (code) => {
      await printAfter;
      if (held) console.log(`[test] ${label}: ${code === 0 ? 'ok' : 'FAILED'}${output ? `\n${output}` : ''}`);
      resolve(code ?? 1);
    });
  });

// Programs some tests drive, from Debian's packages: said up front rather than as a failed test.
const onPath = (name) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
const missing = [
  !onPath('promtool') && 'promtool (apt-get install prometheus)',
  !existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium') &&
    'chromium (apt-get install chromium, or CHROMIUM_PATH)',
  // The PKCS#11 key tests: SoftHSM2's module and its tool, and opensc's pkcs11-tool (keys).
  !(onPath('softhsm2-util') && onPath('pkcs11-tool')) && 'softhsm2 and pkcs11-tool (apt-get install softhsm2 opensc)',
  // The hanging-module tests build a small PKCS#11 shim in C (testkit's pkcs11-hang-shim.ts).
  !onPath('gcc') && 'gcc (apt-get install gcc libc6-dev)',
  // The Redis TLS tests make their self-signed certificate with it.
  !onPath('openssl') && 'openssl (apt-get install openssl)',
].filter(Boolean);
if (missing.length > 0) {
  console.error(`[test] missing: ${missing.join('; ')}`);
  process.exit(1);
}

// The static checks run at once, and beside the jest passes at the lowest CPU priority: the passes
// spend much of their time waiting on the processes their tests start (blocks, fail-overs,
// readiness), and the checks (about 80 CPU s, mostly three single-threaded processes) fill those
// idle moments instead of holding the tests back for their 30 to 50 s. Each one's output is printed
// whole when it ends; a failed check fails the run at the end, with the tests' results.
const checks = Promise.all([
  step('type-check tests', bin('tsc'), ['-p', 'tsconfig.test.json'], { held: true, niced: true }),
  step('lint', bin('eslint'), ['.'], { held: true, niced: true }),
  step('format', bin('prettier'), ['--check', '--log-level', 'warn', '.'], { held: true, niced: true }),
]);

let redis;
if (!process.env.REDIS_URL) {
  redis = await startPrivateRedis();
  console.log(`[test] private redis at ${redis.url}`);
}
// Two jest passes at once: everything but the PKCS#11 files on the workers jest.config.js sets, and
// beside it those files one at a time, as jest processes of their own. The PKCS#11 files share one
// SoftHSM2 token folder (scripts/jest/global-setup.ts makes one per jest process, so the other pass
// never touches theirs), and SoftHSM2's file store answers CKR_GENERAL_ERROR now and then when one
// process reads it while another creates a token in it (seen in full runs, never with the files in
// sequence). The second pass used to wait for the first, 42 s more; beside it, the first pass took
// as long as before and the whole command 40 s less
// (docs/decisions/0036-how-long-the-test-suite-takes-and-why.md). Its output is printed whole once
// the first pass ends.
const HSM_FILES = 'pkcs11';
const passes = [
  { label: 'all but the PKCS#11 tests', args: ['--testPathIgnorePatterns', HSM_FILES] },
  { label: 'the PKCS#11 tests, in sequence', args: ['--runInBand', '--testPathPatterns', HSM_FILES], held: true },
];
const env = { ...process.env, REDIS_URL: process.env.REDIS_URL ?? redis.url };
const results = passes.map((_, i) => path.join(root, `.jest-results-${i}.json`));
for (const file of results) rmSync(file, { force: true });
const jestPass = ({ label, args, held }, i, printAfter) =>
  step(
    `jest (${label})`,
    bin('jest'),
    ['--json', `--outputFile=${results[i]}`, '--passWithNoTests', ...args, ...process.argv.slice(2)],
    { env, held, printAfter },
  );
const first = jestPass(passes[0], 0);
const statuses = await Promise.all([first, jestPass(passes[1], 1, first)]);
const jestStatus = statuses.find((status) => status !== 0) ?? 0;
const checksFailed = (await checks).some((status) => status !== 0);
let passed = 0;
let failed = 0;
/** Every test file's wall time in seconds, from both passes: the slowest are printed at the end. */
const fileSeconds = [];
for (const file of results) {
  if (existsSync(file)) {
    const summary = JSON.parse(readFileSync(file, 'utf8'));
    passed += summary.numPassedTests;
    failed += summary.numFailedTests + summary.numRuntimeErrorTestSuites;
    for (const result of summary.testResults ?? [])
      if (result.endTime && result.startTime)
        fileSeconds.push([path.relative(root, result.name), (result.endTime - result.startTime) / 1000]);
  } else failed++;
}
await redis?.stop();

// Where a developer's wait goes: the ten slowest files (wall time, on workers that share the cores).
console.log('[test] slowest files:');
for (const [file, seconds] of fileSeconds.sort((a, b) => b[1] - a[1]).slice(0, 10))
  console.log(`[test]   ${seconds.toFixed(1).padStart(6)} s  ${file}`);
console.log(`Tests: ${passed} passed, ${failed} failed`);
if (checksFailed) console.log('[test] a static check FAILED (its output is above)');
process.exit(checksFailed || jestStatus !== 0 || failed > 0 || passed === 0 ? 1 : 0);
