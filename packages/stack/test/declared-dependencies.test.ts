/**
 * Every package a workspace package's runtime code imports is among its own `dependencies`.
 * pnpm lets a workspace package resolve what another package (or the root) declares, so an
 * undeclared import works in the checkout and in every test, and fails only in the runtime image,
 * whose production install holds each package's declared dependencies and nothing else.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Runtime imports of a source text: `import … from`, `export … from`, `require()`, `import()`. */
function runtimeImports(source: string): string[] {
  const found: string[] = [];
  const statement = /^\s*(import|export)\s+([^;]*?)\s*from\s*['"]([^'"]+)['"]/gms;
  for (const m of source.matchAll(statement)) {
    const clause = m[2]!.trim();
    if (clause.startsWith('type ')) continue; // erased by the compiler
    const names = /^\{([^}]*)\}$/s.exec(clause);
    if (names && names[1]!.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '))) continue;
    found.push(m[3]!);
  }
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  for (const m of source.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

/**
 * `@scope/name/sub` → `@scope/name`, `name/sub` → `name`; undefined for relative, built-in and what
 * is no package name at all (an `import … from` inside a string, such as embedded Solidity source).
 */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/.*)?$/i.test(specifier)) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs|cjs)$/.test(entry) && !entry.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Workspace packages a build inlines: the SDK's tsup build bundles the protocol (its tsup.config.ts
 * `noExternal`), and sdk-package.test.ts checks the packed SDK names no workspace dependency.
 */
const INLINED_BY_BUILD: Record<string, string[]> = { '@pmm/client': ['@pmm/protocol'] };

const workspacePackages = ['packages', 'services'].flatMap((group) =>
  readdirSync(path.join(ROOT, group))
    .map((name) => path.join(ROOT, group, name))
    .filter((dir) => statSync(path.join(dir, 'src'), { throwIfNoEntry: false })?.isDirectory()),
);

describe('declared dependencies', () => {
  it('guard: the scan sees runtime imports and skips type-only ones', () => {
    const source = [
      "import { a } from 'left';",
      "import type { B } from 'erased';",
      "import { type C, type D } from 'erased-too';",
      "import { type E, f } from 'kept';",
      "export { g } from '@scope/pkg/sub';",
      "const h = require('node:fs');",
      "import './side-effect';",
      "const i = await import('lazy');",
    ].join('\n');
    const names = runtimeImports(source).map(packageName).filter(Boolean);
    expect(names.sort()).toEqual(['@scope/pkg', 'kept', 'lazy', 'left']);
    // The contracts' generated artifacts embed Solidity source: `import {A} from "…"` in a string.
    expect(packageName(',')).toBeUndefined();
  });

  it.each(workspacePackages.map((dir) => [path.relative(ROOT, dir), dir]))(
    'behavior: %s imports only what its package.json declares as dependencies',
    (_name, dir) => {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      // An SDK's peer dependencies are installed by its user; what its build inlines is not installed.
      const declared = new Set([
        manifest.name,
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
        ...(INLINED_BY_BUILD[manifest.name] ?? []),
      ]);
      const undeclared = sourceFiles(path.join(dir, 'src')).flatMap((file) =>
        runtimeImports(readFileSync(file, 'utf8'))
          .map(packageName)
          .filter((name): name is string => name !== undefined && !declared.has(name))
          .map((name) => `${path.relative(ROOT, file)} imports ${name}`),
      );
      expect(undeclared).toEqual([]);
    },
  );
});
