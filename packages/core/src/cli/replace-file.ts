/**
 * Writes a whole file in one step (a reader never sees half of it) at the given mode, whether or
 * not the file exists: the text goes to a temporary name in the same folder that is random and
 * created exclusively (`wx`), then is renamed over the file. A predictable temporary name could be
 * planted beforehand (a link to another file, or a file with a looser mode that `writeFileSync`
 * would keep); an exclusive create refuses anything already there.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

export function replaceFile(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  // Throws EEXIST when anything is at that name: it is not ours, so it is left alone.
  writeFileSync(tmp, text, { mode, flag: 'wx' });
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
