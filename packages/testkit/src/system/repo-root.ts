/** The repository's root folder (this file is packages/testkit/src/system/repo-root.ts). */
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
