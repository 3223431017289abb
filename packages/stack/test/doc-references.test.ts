/**
 * A comment or document that cites another document must cite one that exists: a reason that
 * points nowhere is worse than none. Scans every tracked text file for
 * - Markdown documents named in capitals (`DECISIONS.md`), which must be files of the repository;
 * - `docs/<name>.md` and `docs/<name>.md#<anchor>`, whose file and heading must exist;
 * - relative Markdown links `](path#anchor)` in .md files, whose target and heading must exist;
 * - source files named in comments (`request-timeout.ts`), which must exist somewhere in the tree,
 *   and paths with folders (`http/link-answer.ts`), which must resolve to a file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findDanglingReferences, headingAnchors } from './support/doc-references';

const root = path.resolve(__dirname, '..', '..', '..');
const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && existsSync(path.join(root, file)));
/** This test and its checker cite dangling references on purpose. */
const checkerFiles = /doc-references/;

describe('documents cited in the repository', () => {
  it('behavior: every cited document, section and source file exists', () => {
    const dangling = findDanglingReferences(root, tracked, { scanned: tracked.filter((f) => !checkerFiles.test(f)) });
    expect(dangling).toEqual([]);
  });
});

describe('the reference checker itself', () => {
  const files = ['docs/decisions/0001-error-precedence.md', 'docs/api.md', 'services/signer/src/main.ts', 'README.md'];
  const citing = (text: string) => ({
    scanned: ['services/x.ts'],
    read: (file: string) => (file === 'services/x.ts' ? text : readFileSync(path.join(root, file), 'utf8')),
  });

  it('error: reports a capitalised document that is not in the repository', () => {
    const found = findDanglingReferences(root, files, citing('// see ARCHITECTURE.md for why'));
    expect(found.map((d) => d.target)).toContain('ARCHITECTURE.md');
  });

  it('error: reports a docs anchor with no such heading', () => {
    const found = findDanglingReferences(root, files, citing('// docs/decisions/0001-error-precedence.md#no-such-section'));
    expect(found.map((d) => d.target)).toEqual(['docs/decisions/0001-error-precedence.md#no-such-section']);
  });

  it('error: reports a source file named in a comment that no longer exists', () => {
    const found = findDanglingReferences(root, files, citing('// the timer lives in request-timeout.ts'));
    expect(found.map((d) => d.target)).toEqual(['request-timeout.ts']);
  });

  it('error: reports a relative path in a comment whose file does not exist', () => {
    const found = findDanglingReferences(root, files, citing('// the answer is written by signer http/link-answer.ts'));
    expect(found.map((d) => d.target)).toEqual(['http/link-answer.ts']);
  });

  it('default: accepts references that resolve', () => {
    const text = '// docs/decisions/0001-error-precedence.md#decision, main.ts and signer src/main.ts';
    expect(findDanglingReferences(root, files, citing(text))).toEqual([]);
    const link = {
      scanned: ['docs/x.md'],
      read: (f: string) => (f === 'docs/x.md' ? '[api](api.md#errors)' : readFileSync(path.join(root, f), 'utf8')),
    };
    expect(findDanglingReferences(root, ['docs/x.md', ...files], link)).toEqual([]);
  });

  it('default: heading anchors follow GitHub slugs', () => {
    expect(headingAnchors('## Error precedence\n### `GET /v2/price` — the book\n')).toEqual(
      new Set(['error-precedence', 'get-v2price--the-book']),
    );
  });
});
