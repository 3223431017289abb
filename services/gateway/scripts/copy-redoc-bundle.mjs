// Build step of the gateway (run by the root `npm run build`, so also by the Dockerfile): copies
// Redoc's standalone bundle, the one file the `/docs` page needs, out of the `redoc` development
// dependency into services/gateway/assets/ (not committed; scripts/docker/assemble-image.sh puts the
// folder in the runtime image). The `redoc` package itself, with React, MobX and core-js, stays out of
// every image (docs/decisions/0017-the-api-reference-page-redoc-served-by-the-gateway.md).
//
// The bundle is a script every visitor's browser runs from our origin: the build accepts only the
// bytes that were reviewed, pinned by SHA-256 below, and fails on anything else. Writes:
//   assets/redoc.standalone.js              the bundle, as published
//   assets/redoc.standalone.js.LICENSE.txt  the licences of what it bundles (its first line points there)
//   assets/LICENSE                          Redoc's own licence (MIT)
//   assets/redoc-bundle.json                { version, sha256 }: docs-routes.ts names the URL after the version
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * SHA-256 of redoc@2.5.4's bundles/redoc.standalone.js. The version is pinned (exactly) by the
 * `redoc` devDependency in services/gateway/package.json. To update Redoc: set the new exact
 * version there, `pnpm install`, run this script (it fails, printing the new bundle's hash),
 * check the release and the page (`docs-page.browser.test.ts`), then put the printed hash here.
 */
const PINNED_SHA256 = 'dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(pkgDir, 'assets');
const require = createRequire(path.join(pkgDir, 'package.json'));
const fail = (msg) => {
  console.error(`[gateway] ${msg}`);
  process.exit(1);
};

const spec = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).devDependencies?.redoc;
if (!/^\d+\.\d+\.\d+$/.test(spec ?? ''))
  fail(`redoc must be a devDependency of services/gateway pinned to an exact version, not ${JSON.stringify(spec)}`);

const redocDir = path.dirname(require.resolve('redoc/package.json'));
const { version } = JSON.parse(readFileSync(path.join(redocDir, 'package.json'), 'utf8'));
const bundleFile = path.join(redocDir, 'bundles', 'redoc.standalone.js');
const bundle = readFileSync(bundleFile);
const sha256 = createHash('sha256').update(bundle).digest('hex');
if (sha256 !== PINNED_SHA256)
  fail(
    `Redoc's bundle does not match its pin: ${bundleFile} (redoc ${version}) has SHA-256\n` +
      `  actual:   ${sha256}\n  expected: ${PINNED_SHA256}\n` +
      'If you meant to update Redoc, check the new version and its page, then set PINNED_SHA256 in\n' +
      'services/gateway/scripts/copy-redoc-bundle.mjs to the actual hash; otherwise reinstall (pnpm install --frozen-lockfile).',
  );

mkdirSync(outDir, { recursive: true });
/** Written beside, then renamed: a gateway reading the folder never sees half a file. */
const put = (name, write) => {
  const tmp = path.join(outDir, `.${name}.tmp`);
  write(tmp);
  renameSync(tmp, path.join(outDir, name));
};
put('redoc.standalone.js', (tmp) => writeFileSync(tmp, bundle));
put('redoc.standalone.js.LICENSE.txt', (tmp) => copyFileSync(`${bundleFile}.LICENSE.txt`, tmp));
put('LICENSE', (tmp) => copyFileSync(path.join(redocDir, 'LICENSE'), tmp));
put('redoc-bundle.json', (tmp) => writeFileSync(tmp, `${JSON.stringify({ version, sha256 }, null, 2)}\n`));
