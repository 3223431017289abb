/**
 * A comment or document that cites another document must cite one that exists: a reason that
 * points nowhere is worse than none. Scans every tracked text file for
 * - Markdown documents named in capitals (`DECISIONS.md`), which must be files of the repository;
 * - `docs/<name>.md`, `docs/<folder>/<name>.md` and their `#<anchor>`s, whose file and heading must exist;
 * - relative Markdown links `](path#anchor)` in every .md file (README.md, every page under docs/ and
 *   its folders, the packages' and services' READMEs), resolved from the linking page's folder as a
 *   browser does, whose target and heading (outside code blocks) must exist;
 * - source files named in comments (`request-timeout.ts`), which must exist somewhere in the tree,
 *   and paths with folders (`http/link-answer.ts`), which must resolve to a file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findDanglingReferences, headingAnchors } from '../support/doc-references';

const root = path.resolve(__dirname, '..', '..', '..', '..');
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

  it('behavior: README.md and every Markdown page under docs/, subfolders included, are scanned', () => {
    const pages = (dir: string): string[] =>
      readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? pages(`${dir}/${entry.name}`)
          : entry.name.endsWith('.md')
            ? [`${dir}/${entry.name}`]
            : [],
      );
    const markdown = ['README.md', ...pages('docs')];
    expect(markdown.filter((page) => page.split('/').length > 2).length).toBeGreaterThan(0);
    expect(markdown.filter((page) => !tracked.includes(page))).toEqual([]);
  });
});

describe('the reference checker itself', () => {
  const files = [
    'docs/decisions/0001-error-precedence.md',
    'docs/api.md',
    'docs/api-refusals.md',
    'services/signer/src/main.ts',
    'README.md',
  ];
  const citing = (text: string) => ({
    scanned: ['services/x.ts'],
    read: (file: string) => (file === 'services/x.ts' ? text : readFileSync(path.join(root, file), 'utf8')),
  });

  it('error: reports a capitalised document that is not in the repository', () => {
    const found = findDanglingReferences(root, files, citing('// see ARCHITECTURE.md for why'));
    expect(found.map((d) => d.target)).toContain('ARCHITECTURE.md');
  });

  it('error: reports a docs anchor with no such heading', () => {
    const found = findDanglingReferences(
      root,
      files,
      citing('// docs/decisions/0001-error-precedence.md#no-such-section'),
    );
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

  it('error: reports a broken anchor in a page of a docs subfolder', () => {
    const page = 'docs/operations/x.md';
    const links = {
      scanned: [page],
      read: (f: string) =>
        f === page
          ? '[halts](halts.md#halts)\n[the stop](halts.md#no-such-heading)\n[api](../api.md#no-such-section)\n'
          : readFileSync(path.join(root, f), 'utf8'),
    };
    const found = findDanglingReferences(root, [page, 'docs/operations/halts.md', 'docs/api.md'], links);
    expect(found.map((d) => [d.line, d.target])).toEqual([
      [2, 'halts.md#no-such-heading'],
      [3, '../api.md#no-such-section'],
    ]);
  });

  it("error: reports a Markdown link that resolves from the repository's root but not from its page", () => {
    const page = 'docs/operations/x.md';
    const links = {
      scanned: [page],
      read: (f: string) => (f === page ? '[api](docs/api.md) and [readme](README.md)\n' : ''),
    };
    const found = findDanglingReferences(root, [page, 'docs/api.md', 'README.md'], links);
    expect(found.map((d) => d.target)).toEqual(['docs/api.md', 'README.md']);
  });

  it("error: reports a code comment citing a subfolder page's missing anchor or a missing record", () => {
    const text = '// docs/operations/halts.md#no-such-heading, docs/decisions/9999-no-such-record.md';
    const found = findDanglingReferences(root, ['docs/operations/halts.md', ...files], citing(text));
    expect(found.map((d) => d.target)).toEqual([
      'docs/operations/halts.md#no-such-heading',
      'docs/decisions/9999-no-such-record.md',
    ]);
  });

  it('default: accepts references that resolve', () => {
    const text = '// docs/decisions/0001-error-precedence.md#decision, main.ts and signer src/main.ts';
    expect(findDanglingReferences(root, files, citing(text))).toEqual([]);
    const link = {
      scanned: ['docs/x.md'],
      read: (f: string) =>
        f === 'docs/x.md'
          ? '[api](api-refusals.md#errors) and [chains](api.md#chains)'
          : readFileSync(path.join(root, f), 'utf8'),
    };
    expect(findDanglingReferences(root, ['docs/x.md', ...files], link)).toEqual([]);
  });

  it('default: a # line inside a code block is no heading', () => {
    expect(headingAnchors('```sh\n# make a key pair\n```\n## Keys\n~~~\n# not either\n~~~\n')).toEqual(
      new Set(['keys']),
    );
  });

  it('default: heading anchors follow GitHub slugs', () => {
    expect(headingAnchors('## Error precedence\n### `GET /v2/price` — the book\n')).toEqual(
      new Set(['error-precedence', 'get-v2price--the-book']),
    );
  });
});
