/**
 * A fresh clone's install and the README's commands print no warning (a newcomer cannot tell a
 * harmless warning from a broken install). Three causes seen: npm reading a pnpm setting in
 * `.npmrc` ("Unknown project config", before every `npm start`, `npm test` and `npm run`); pnpm
 * linking a workspace package's `bin` into its dependents before the build made the file ("Failed
 * to create bin"); and pnpm's notice of dependencies whose build scripts it skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

interface PackageJson {
  name: string;
  bin?: string | Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  pnpm?: { onlyBuiltDependencies?: string[]; ignoredBuiltDependencies?: string[] };
}
const readPackage = (dir: string): PackageJson => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));

const workspaceDirs = ['packages', 'services'].flatMap((group) =>
  readdirSync(path.join(ROOT, group))
    .map((name) => path.join(ROOT, group, name))
    .filter((dir) => existsSync(path.join(dir, 'package.json'))),
);

it("behavior: npm reads the project's .npmrc without a warning (every npm start, npm test and npm run does)", () => {
  const result = spawnSync('npm', ['config', 'get', 'engine-strict'], { cwd: ROOT, encoding: 'utf8' });
  expect(result.status).toBe(0);
  expect(result.stderr).toBe('');
});

it('behavior: no workspace package another one depends on links a bin that only the build makes', () => {
  const committed = new Set(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'));
  const packages = workspaceDirs.map((dir) => ({ dir, pkg: readPackage(dir) }));
  const dependedOn = new Set(
    packages.flatMap(({ pkg }) =>
      Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })
        .filter(([, version]) => version.startsWith('workspace:'))
        .map(([name]) => name),
    ),
  );
  const unbuilt = packages
    .filter(({ pkg }) => dependedOn.has(pkg.name) && pkg.bin !== undefined)
    .flatMap(({ dir, pkg }) =>
      Object.values(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : pkg.bin!)
        .map((target) => path.relative(ROOT, path.join(dir, target)))
        .filter((file) => !committed.has(file)),
    );
  expect(unbuilt).toEqual([]);
});

it('behavior: every installed dependency with a build script is either allowed to build or known to need none', () => {
  const { pnpm } = readPackage(ROOT);
  const decided = new Set([...(pnpm?.onlyBuiltDependencies ?? []), ...(pnpm?.ignoredBuiltDependencies ?? [])]);
  const store = path.join(ROOT, 'node_modules', '.pnpm');
  const withBuild = new Set<string>();
  for (const entry of readdirSync(store)) {
    const modules = path.join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    for (const name of readdirSync(modules).flatMap((n) =>
      n.startsWith('@') ? readdirSync(path.join(modules, n)).map((m) => `${n}/${m}`) : [n],
    )) {
      const dir = path.join(modules, name);
      if (!existsSync(path.join(dir, 'package.json')) || !entry.startsWith(name.replace('/', '+'))) continue;
      const { scripts = {} } = readPackage(dir);
      // What pnpm runs at install: the lifecycle scripts, or node-gyp for a binding.gyp without them.
      if (scripts.preinstall || scripts.install || scripts.postinstall || existsSync(path.join(dir, 'binding.gyp')))
        withBuild.add(name);
    }
  }
  expect([...withBuild].filter((name) => !decided.has(name)).sort()).toEqual([]);
});
