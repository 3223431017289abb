/**
 * Jest's global set-up and tear-down: a private SoftHSM2 folder for the whole run.
 *
 * SoftHSM reads SOFTHSM2_CONF from the real process environment when the module is
 * initialised, and a test cannot set it (jest gives each test file a copy of process.env); so
 * it is set here, in jest's own process, before any worker starts, and every worker and every
 * process a test starts inherits it. Always a private folder: tests never touch the machine's
 * tokens. Each test's tokens get labels of their own (softhsm.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Where the run's folder is, for softhsm.ts and for the tear-down. */
export const RUN_FOLDER_ENV = 'PMM_SOFTHSM_DIR';

export function createSoftHsmRunFolder(): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmm-softhsm-'));
  const tokens = path.join(dir, 'tokens');
  mkdirSync(tokens);
  const conf = path.join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  process.env[RUN_FOLDER_ENV] = dir;
}

export function removeSoftHsmRunFolder(): void {
  const dir = process.env[RUN_FOLDER_ENV];
  if (dir) rmSync(dir, { recursive: true, force: true });
}
