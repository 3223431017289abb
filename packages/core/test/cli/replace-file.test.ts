/**
 * replaceFile, the one writer of owner-only files (`npm start`'s and the devnet's stack.json, the
 * key export, the devnet's compose secrets): nothing planted beside the file is followed or kept.
 */
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { replaceFile } from '@pmm/core';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'replace-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('replaceFile', () => {
  it('behavior: creates the file at mode 600 and replaces a world-readable one, leaving no temporary file', () => {
    const file = path.join(dir, 'stack.json');
    writeFileSync(file, 'old', { mode: 0o644 });
    replaceFile(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['stack.json']);
  });

  it('security: a link planted at the temporary names a writer could predict is not written through', () => {
    const file = path.join(dir, 'stack.json');
    const victim = path.join(dir, 'victim');
    writeFileSync(victim, 'untouched', { mode: 0o644 });
    // The names a pid- or time-based writer would use; a random name cannot be planted ahead.
    for (const name of [`${file}.${process.pid}.tmp`, `${file}.tmp`]) symlinkSync(victim, name);
    replaceFile(file, 'secret');
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(lstatSync(file).isFile()).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('behavior: a mode can be given (a metrics file another user reads)', () => {
    const file = path.join(dir, 'm.prom');
    replaceFile(file, 'x 1\n', 0o644);
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });
});
