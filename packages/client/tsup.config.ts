/**
 * The published build (`pnpm pack` runs it as `prepack`): ESM and CommonJS, each with its own
 * declarations, in dist/npm. `@pmm/protocol` is bundled in (it is not published; only what
 * the SDK uses of it is kept), ethers stays an import (a peer dependency). The workspace's own
 * `tsc -b` build is a type-check and writes dist/tsc, which is never packed.
 */
import path from 'node:path';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  outDir: 'dist/npm',
  format: ['esm', 'cjs'],
  tsconfig: 'tsconfig.npm.json',
  dts: { resolve: ['@pmm/protocol'] },
  noExternal: ['@pmm/protocol'],
  // The protocol's ES sources (not its CommonJS dist), so that what the SDK does not use
  // (request validation with ajv, integrator records…) is dropped.
  esbuildOptions(options) {
    options.alias = { '@pmm/protocol': path.resolve(__dirname, '../protocol/src/index.ts') };
  },
  external: ['ethers'],
  target: 'es2022',
  platform: 'neutral',
  sourcemap: false,
  clean: true,
  treeshake: true,
});
