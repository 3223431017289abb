/**
 * `/docs` without React at run time: the build copies Redoc's standalone bundle out of the pinned
 * `redoc` development dependency (scripts/copy-redoc-bundle.mjs), accepts only the bytes pinned by
 * SHA-256, and the gateway's production dependencies hold neither Redoc nor what it brings.
 * The script runs as the build runs it, in a scratch copy of the gateway folder whose
 * node_modules/redoc is the installed package or a tampered copy of it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

const GATEWAY_DIR = path.resolve(__dirname, '..', '..');
const ROOT = path.resolve(GATEWAY_DIR, '..', '..');
const SCRIPT = 'scripts/copy-redoc-bundle.mjs';
const REDOC_DIR = path.dirname(require.resolve('redoc/package.json'));
const BUNDLE = readFileSync(path.join(REDOC_DIR, 'bundles', 'redoc.standalone.js'));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const scratch = mkdtempSync(path.join(tmpdir(), 'redoc-bundle-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A gateway folder with the script, a package.json naming `spec`, and a `redoc` package holding `bundle`. */
function gatewayCopy(name: string, { spec = '2.5.4', bundle = BUNDLE } = {}): string {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  cpSync(path.join(GATEWAY_DIR, SCRIPT), path.join(dir, SCRIPT));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ devDependencies: { redoc: spec } }));
  const redoc = path.join(dir, 'node_modules', 'redoc');
  for (const file of ['package.json', 'LICENSE', 'bundles/redoc.standalone.js.LICENSE.txt'])
    cpSync(path.join(REDOC_DIR, file), path.join(redoc, file));
  writeFileSync(path.join(redoc, 'bundles', 'redoc.standalone.js'), bundle);
  return dir;
}

function build(dir: string): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [path.join(dir, SCRIPT)], { encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stderr: run.stderr };
}

describe("Redoc's bundle, copied at build time", () => {
  it('behavior: the pinned bundle is copied as published with its licences, and its version named for the URL', () => {
    const dir = gatewayCopy('genuine');
    expect(build(dir)).toEqual({ status: 0, stderr: '' });
    const assets = path.join(dir, 'assets');
    expect(readFileSync(path.join(assets, 'redoc.standalone.js')).equals(BUNDLE)).toBe(true);
    const licences: Array<[copy: string, original: string]> = [
      ['LICENSE', 'LICENSE'],
      ['redoc.standalone.js.LICENSE.txt', 'bundles/redoc.standalone.js.LICENSE.txt'],
    ];
    for (const [copy, original] of licences)
      expect(readFileSync(path.join(assets, copy), 'utf8')).toBe(readFileSync(path.join(REDOC_DIR, original), 'utf8'));
    const { version } = JSON.parse(readFileSync(path.join(REDOC_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(JSON.parse(readFileSync(path.join(assets, 'redoc-bundle.json'), 'utf8'))).toEqual({
      version,
      sha256: sha256(BUNDLE),
    });
  });

  it('error: a bundle with other bytes fails the build, naming both hashes and how to update the pin; nothing is copied', () => {
    const tampered = Buffer.concat([BUNDLE, Buffer.from('\nfetch("https://example.invalid/");\n')]);
    const dir = gatewayCopy('tampered', { bundle: tampered });
    const { status, stderr } = build(dir);
    expect(status).toBe(1);
    expect(stderr).toContain(`actual:   ${sha256(tampered)}`);
    expect(stderr).toContain(`expected: ${sha256(BUNDLE)}`);
    expect(stderr).toContain('PINNED_SHA256');
    expect(stderr).toContain('services/gateway/scripts/copy-redoc-bundle.mjs');
    expect(existsSync(path.join(dir, 'assets'))).toBe(false);
  });

  it('error: a version range instead of an exact version fails the build', () => {
    const dir = gatewayCopy('range', { spec: '^2.5.4' });
    const { status, stderr } = build(dir);
    expect(status).toBe(1);
    expect(stderr).toContain('pinned to an exact version, not "^2.5.4"');
    expect(existsSync(path.join(dir, 'assets'))).toBe(false);
  });

  it('invariant: the gateway itself pins redoc exactly, as a development dependency only', () => {
    const manifest = JSON.parse(readFileSync(path.join(GATEWAY_DIR, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies.redoc).toBeUndefined();
    expect(manifest.devDependencies.redoc).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

interface Lockfile {
  importers: Record<string, { dependencies?: Record<string, { version: string }> }>;
  snapshots: Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }>;
}

/** Every package name in the production closure of a workspace project, read from pnpm-lock.yaml. */
function productionClosure(lock: Lockfile, importer: string): Set<string> {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (from: string, deps: Record<string, string>) => {
    for (const [name, version] of Object.entries(deps)) {
      if (version.startsWith('link:')) {
        const project = path.posix.normalize(path.posix.join(from, version.slice('link:'.length)));
        if (!seen.has(project)) {
          seen.add(project);
          visitImporter(project);
        }
        continue;
      }
      const key = `${name}@${version}`;
      names.add(name);
      if (seen.has(key)) continue;
      seen.add(key);
      const snapshot = lock.snapshots[key];
      if (!snapshot) throw new Error(`pnpm-lock.yaml has no snapshot ${key}`);
      visit(from, { ...snapshot.dependencies, ...snapshot.optionalDependencies });
    }
  };
  const visitImporter = (project: string) => {
    const deps = lock.importers[project]?.dependencies ?? {};
    visit(project, Object.fromEntries(Object.entries(deps).map(([name, d]) => [name, d.version])));
  };
  visitImporter(importer);
  return names;
}

describe("the gateway's production dependencies", () => {
  const lock = parse(readFileSync(path.join(ROOT, 'pnpm-lock.yaml'), 'utf8')) as Lockfile;

  it('guard: the walk follows workspace links and transitive dependencies', () => {
    const names = productionClosure(lock, 'services/gateway');
    // express → router (transitive); @pmm/core (a workspace link) → ioredis, prom-client.
    expect([...names].filter((n) => ['express', 'router', 'ioredis', 'prom-client'].includes(n)).sort()).toEqual([
      'express',
      'ioredis',
      'prom-client',
      'router',
    ]);
  });

  it('security: hold neither Redoc nor the React, MobX and core-js it brings (they are not in the runtime image)', () => {
    const names = productionClosure(lock, 'services/gateway');
    const unwanted = ['redoc', 'react', 'react-dom', 'mobx', 'mobx-react', 'styled-components', 'core-js'];
    expect(unwanted.filter((n) => names.has(n))).toEqual([]);
  });
});
