// Finds (or installs) the pnpm pinned in package.json's `packageManager`, so that the root
// scripts work from a fresh clone with only Node and npm. corepack is not used: it fails on
// these machines (see docs/decisions/0066-pnpm-in-containers.md).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pinned = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];

function versionOf(cmd, args) {
  try {
    return execFileSync(cmd, [...args, '--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** Returns [command, prefixArgs] that run the pinned pnpm. */
export function findPnpm() {
  if (versionOf('pnpm', []) === pinned) return ['pnpm', []];
  // Running under pnpm already (npm_execpath points at it) with the right version.
  const execPath = process.env.npm_execpath ?? '';
  if (execPath.includes('pnpm') && versionOf(process.execPath, [execPath]) === pinned)
    return [process.execPath, [execPath]];
  console.log(`[ensure] installing pnpm@${pinned} with npm`);
  const global = spawnSync('npm', ['install', '-g', `pnpm@${pinned}`], { stdio: 'inherit' });
  if (global.status === 0 && versionOf('pnpm', []) === pinned) return ['pnpm', []];
  console.log('[ensure] global install not possible; using npx');
  return ['npx', ['-y', `pnpm@${pinned}`]];
}

/** Runs pnpm with args in the repository root; exits the process on failure. */
export function runPnpm(pnpm, args) {
  const [cmd, prefix] = pnpm;
  const r = spawnSync(cmd, [...prefix, ...args], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[ensure] pnpm ${args.join(' ')} failed`);
    process.exit(r.status ?? 1);
  }
}
