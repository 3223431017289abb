/**
 * The SDK as an integrator gets it: `pnpm pack` of packages/client (which builds it), the
 * tarball installed with its peer dependency (ethers) and viem into a fresh npm project
 * outside the workspace, then used there against the local stack from an ES module, from
 * CommonJS and from TypeScript (type-checked by tsc, then run). The programs are in
 * sdk-consumer/. What waits on nothing else runs at once: the stack starts while the SDK is
 * packed, installed and type-checked, and the three programs run together once it is up (each on
 * a chain of its own), each test checking what its program printed. Temporary directories and
 * the stack are removed afterwards.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT as ROOT, startStack, stopProcess, type StartedStack } from '@pmm/testkit';

const run = promisify(execFile);
const CONSUMER = path.join(__dirname, 'sdk-consumer');
const work = mkdtempSync(path.join(tmpdir(), 'pmm-sdk-package-'));
const project = path.join(work, 'project');
let stack: StartedStack | undefined;

/** Packs the SDK and installs the tarball into a new npm project; returns the tarball's name. */
async function installPackedSdk(): Promise<string> {
  await run('pnpm', ['pack', '--pack-destination', work], { cwd: path.join(ROOT, 'packages/client') });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
  writeFileSync(path.join(work, 'package.json'), '{}'); // keeps npm from walking up to the workspace
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true }));
  await run(
    'npm',
    [
      'install',
      path.join(work, tarball),
      'ethers@^6',
      'viem@^2',
      '@types/node@^20',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
    ],
    { cwd: project },
  );
  for (const file of readdirSync(CONSUMER)) copyFileSync(path.join(CONSUMER, file), path.join(project, file));
  return tarball;
}

/** Runs a program of the consumer project; returns the JSON line it printed. */
async function runProgram(file: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [file], {
    cwd: project,
    env: { ...process.env, STACK_FILE: stack!.stackFile },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

/** What each program printed: run at once, as soon as the stack is up; each test checks its own. */
let programs: Record<'esm' | 'cjs' | 'typed', Promise<Record<string, unknown>>>;

/**
 * The consumer's TypeScript program type-checked against the packed declarations. skipLibCheck
 * spares tsc ethers' and viem's declarations (checking them whole took 14 CPU s of this file's
 * 70). It would spare ours too, and a broken reference in them (a type from the unbundled
 * @pmm/protocol, say) would then pass as `any`: copies of the packed declarations are sources of
 * the program, checked in full.
 */
async function typeCheckConsumer(): Promise<void> {
  const packed = path.join(project, 'node_modules/@pmm/client/dist/npm');
  copyFileSync(path.join(packed, 'index.d.mts'), path.join(project, 'client-declarations.mts'));
  copyFileSync(path.join(packed, 'index.d.ts'), path.join(project, 'client-declarations.cts'));
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        lib: ['ES2022', 'DOM'],
        outDir: 'out',
      },
      files: ['typed.mts', 'client-declarations.mts', 'client-declarations.cts'],
    }),
  );
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: project });
}

/** A promise whose failure is left to the test that awaits it (not an unhandled rejection before then). */
const awaitedLater = <T>(p: Promise<T>): Promise<T> => {
  p.catch(() => undefined);
  return p;
};

beforeAll(async () => {
  // tsc needs only the installed package: it runs while the stack starts.
  const installed = installPackedSdk();
  const typeChecked = awaitedLater(installed.then(typeCheckConsumer));
  // A still market: the CommonJS program holds the swap to the book's estimate, which a market
  // that moves every block (npm start's default) can take away between the book and the swap.
  const [started] = await Promise.all([startStack({ env: { DEVNET_MARKET: 'off' } }), installed]);
  stack = started;
  // Each program on its own chain (the book of 8453, a swap on 56, a swap on 4663): they run at once.
  programs = {
    esm: awaitedLater(runProgram('esm.mjs')),
    cjs: awaitedLater(runProgram('cjs.cjs')),
    typed: awaitedLater(typeChecked.then(() => runProgram('out/typed.mjs'))),
  };
}, 240_000);

afterAll(async () => {
  if (stack) await stopProcess(stack.process, 'SIGINT');
  rmSync(work, { recursive: true, force: true });
}, 30_000);

describe('the packed SDK in a fresh npm project', () => {
  it('behavior: the package holds only the build, README, LICENSE and package.json; no workspace dependency', async () => {
    const { stdout } = await run('tar', [
      'tzf',
      path.join(
        work,
        readdirSync(work).find((f) => f.endsWith('.tgz'))!,
      ),
    ]);
    expect(stdout.trim().split('\n').sort()).toEqual(
      [
        'package/LICENSE',
        'package/README.md',
        'package/dist/npm/index.d.mts',
        'package/dist/npm/index.d.ts',
        'package/dist/npm/index.js',
        'package/dist/npm/index.mjs',
        'package/package.json',
      ].sort(),
    );
    // The protocol is bundled (not installed), ethers is the only peer, nothing else comes along.
    const manifest = JSON.parse(
      readFileSync(path.join(project, 'node_modules/@pmm/client/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toEqual({ ethers: expect.any(String) });
    expect(existsSync(path.join(project, 'node_modules/@pmm/protocol'))).toBe(false);
  });

  it('behavior: from an ES module: the book polled and streamed, RateLimit figures, typed errors', async () => {
    const out = await programs.esm;
    expect(out.polledBlock).toEqual(expect.any(Number));
    expect(out.pairs).toBeGreaterThan(0);
    const streamed = out.streamed as number[];
    expect(streamed).toHaveLength(3);
    expect([...streamed].sort((a, b) => a - b)).toEqual(streamed);
    expect(new Set(streamed).size).toBe(3);
    expect(out.rateLimit).toMatchObject({ limit: expect.any(Number), remaining: expect.any(Number) });
    expect(out.refused).toEqual({ isPmmApiError: true, status: 400, code: 'UNSUPPORTED_CHAIN' });
  }, 60_000);

  it('behavior: from CommonJS: a swap with an ethers signer pays at least the book estimate', async () => {
    const out = await programs.cjs;
    expect(out.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(BigInt(out.amountOut as string)).toBeGreaterThan(0n);
    expect(BigInt(out.amountOut as string)).toBeGreaterThanOrEqual(BigInt(out.estimate as string));
  }, 60_000);

  it('behavior: from TypeScript: type-checks against the packed declarations; a swap and signatures with viem', async () => {
    // Type-checked by tsc (typeCheckConsumer) before it ran.
    const out = await programs.typed;
    expect(out.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(BigInt(out.amountOut as string)).toBeGreaterThan(0n);
    expect(out.sameSignature).toBe(true);
    // tsc and two swaps on 2 shared cores under the whole suite's load: a time limit, not a speed check.
  }, 180_000);
});
