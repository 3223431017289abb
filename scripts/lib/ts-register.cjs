// Lets plain `node -r ./scripts/lib/ts-register.cjs <file>.ts` run TypeScript (benchmarks and
// dev tools) the way jest does: @swc/core transpiles, and `@pmm/<name>` resolves to the
// package's src/index.ts. Production code never uses this: services run from dist/.
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const root = path.resolve(__dirname, '..', '..');
const workspace = { signer: 'services', indexer: 'services', gateway: 'services' };

const originalResolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const m = /^@pmm\/([a-z-]+)$/.exec(request);
  if (m) request = path.join(root, workspace[m[1]] ?? 'packages', m[1], 'src', 'index.ts');
  return originalResolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function (module, filename) {
  const source = require('node:fs').readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
