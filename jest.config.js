/**
 * One jest run for the whole workspace. TypeScript is transpiled by @swc/jest (type-checking
 * is done separately by `tsc -p tsconfig.test.json`), and `@pmm/*` imports resolve to the
 * packages' sources, never to `dist/`.
 */
const swc = [
  '@swc/jest',
  // `lazy`: a package a file imports (ethers, viem, express, ioredis…) is required when the file
  // first uses it, not when the file loads. Jest loads every module again for each test file, and
  // most files import @pmm/core or @pmm/testkit, whose indexes reach every library: ten files
  // importing only those took 9.7 CPU s eagerly and 6.1 lazily (`jest --runInBand`), about 0.36 s
  // less per file, some 70 CPU s of a full run. Relative imports stay eager (their order is kept).
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs', lazy: true } },
];

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@pmm/(protocol|core|contracts|devnet|client|testkit|operator)$': '<rootDir>/packages/$1/src/index.ts',
    '^@pmm/(signer|indexer|gateway)$': '<rootDir>/services/$1/src/index.ts',
  },
  testMatch: ['<rootDir>/{packages,services}/*/test/**/*.test.ts'],
  testTimeout: 60_000,
  // A private SoftHSM2 folder for the run (packages/testkit/src/pkcs11/softhsm-run-folder.ts).
  globalSetup: '<rootDir>/scripts/jest/global-setup.ts',
  globalTeardown: '<rootDir>/scripts/jest/global-teardown.ts',
  // Integration tests start anvil nodes, Redis servers and service processes, and spend most of
  // their time waiting on them (blocks, fail-overs, readiness): on the 2-core machines the pass is
  // the sum of its files' wall times over the workers. Four workers: clean clones' `.ci/run` took
  // 320 to 342 s against 363 to 370 s with three. Their extra load found five timing flaws in
  // tests, four fixed and one not understood yet; four clean clones in a row then passed
  // (docs/decisions/0036-how-long-the-test-suite-takes-and-why.md).
  maxWorkers: 4,
  // At the end of a run a worker has no handle left open (checked with async_hooks at the moment
  // jest asks it to stop), yet tearing down a process that ran dozens of files can take longer than
  // jest's default 500 ms on two loaded cores; jest then kills it and prints "A worker process has
  // failed to exit gracefully", a leak that is not there. A worker that really hangs is still killed.
  workerGracefulExitTimeout: 5_000,
};
