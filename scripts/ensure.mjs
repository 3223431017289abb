// Makes a clone ready to run: the pinned pnpm, the locked dependencies, a fresh build.
// Cheap when nothing changed: the install is skipped when node_modules matches the lockfile,
// and the build is incremental (tsc -b, contract compilation cached by source hash).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { findPnpm, root, runPnpm } from './lib/pnpm.mjs';

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`Node ${process.versions.node} is too old: this project needs Node >= 20.`);
  process.exit(1);
}

const pnpm = findPnpm();
const installed = path.join(root, 'node_modules', '.pnpm', 'lock.yaml');
const lockfile = path.join(root, 'pnpm-lock.yaml');
if (!existsSync(installed) || statSync(lockfile).mtimeMs > statSync(installed).mtimeMs) {
  console.log('[ensure] installing dependencies');
  runPnpm(pnpm, ['install', '--frozen-lockfile']);
}
runPnpm(pnpm, ['run', '--silent', 'build']);
