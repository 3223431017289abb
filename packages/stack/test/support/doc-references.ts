/**
 * Finds references to documents, sections and source files that do not exist (see
 * doc-references.test.ts for what counts as a reference).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface DanglingReference {
  file: string;
  line: number;
  target: string;
}

const SCANNED = /\.(ts|mjs|cjs|js|md|ya?ml|sh)$|(^|\/)(Dockerfile|\.env\.example|run)$/;
const SOURCE = /\.(ts|mjs|cjs|js)$/;
const CAPITALISED_DOC = /\b[A-Z][A-Z0-9_-]*\.md\b/g;
const REPO_PATH = /(?<![\w/.-])((?:docs|packages|services|scripts)\/[\w./-]*[\w-](?:#[\w-]+)?)/g;
const MARKDOWN_LINK = /\]\(([^)\s]+)\)/g;
const COMMENT = /^\s*(\/\/|\/\*|\*|#)/;
const SOURCE_NAME = /(?<![\w/.-])([a-z][\w-]*\.(?:ts|mjs|cjs|js))\b/g;
/** A path with folders in a comment (`http/sign-route.ts`, `../store/x.ts`), outside the repository roots. */
const RELATIVE_PATH = /(?<![\w/.-])((?:\.\.?\/)*[\w-]+(?:\/[\w.-]+)*\/[\w-]+\.(?:ts|mjs|cjs|js|lua))\b/g;
const ROOTED = /^(docs|packages|services|scripts)\//;
/** Names that look like files in prose but are products or patterns. */
const NOT_FILES = new Set(['node.js', 'express.js', 'hardhat.config.js', 'next.js']);

/** A Markdown document without its fenced code blocks (a `# comment` in a shell block is no heading). */
function outsideFences(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .filter((line) => {
      const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (marker !== undefined && (fence === undefined || (marker[0] === fence[0] && marker.length >= fence.length))) {
        fence = fence === undefined ? marker : undefined;
        return false;
      }
      return fence === undefined;
    })
    .join('\n');
}

/** The anchors GitHub gives a Markdown document's headings (those outside code blocks). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of outsideFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/**
 * The references in `scanned` (default: every file) that do not resolve among `files`. Paths
 * resolve from the repository's root, the citing file's folder or its package's folder.
 */
export function findDanglingReferences(
  root: string,
  files: string[],
  options: { scanned?: string[]; read?: (file: string) => string } = {},
): DanglingReference[] {
  const read = options.read ?? ((file: string) => readFileSync(path.join(root, file), 'utf8'));
  const known = new Set(files);
  const basenames = new Set(files.map((file) => path.basename(file)));
  const stems = new Set(
    files.filter((file) => SOURCE.test(file)).map((file) => path.basename(file).replace(SOURCE, '')),
  );
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let found = anchorsOf.get(file);
    if (!found) anchorsOf.set(file, (found = headingAnchors(read(file))));
    return found;
  };
  /** A built file (`dist/x.js`) exists when its source (`src/x.ts`) does. */
  const pathExists = (file: string): boolean =>
    known.has(file) ||
    [...known].some((k) => k.startsWith(`${file}/`)) ||
    (file.includes('/dist/') && known.has(file.replace('/dist/', '/src/').replace(/\.js$/, '.ts')));
  const resolves = (target: string, from: string): boolean => {
    const [relative, anchor] = target.split('#') as [string, string | undefined];
    const packageDir = /^(packages|services)\/[^/]+/.exec(from)?.[0] ?? '';
    const file = [relative, path.posix.join(path.posix.dirname(from), relative), path.posix.join(packageDir, relative)]
      .map((candidate) => (candidate === '' ? from : path.posix.normalize(candidate)))
      .find(pathExists);
    if (file === undefined) return false;
    return anchor === undefined || !file.endsWith('.md') || anchors(file).has(anchor);
  };
  /**
   * A relative Markdown link resolves as a reader's browser resolves it: from the linking
   * document's folder (`/` from the repository's root), never from the root or a package.
   */
  const linkResolves = (link: string, from: string): boolean => {
    const [relative, anchor] = link.split('#') as [string, string | undefined];
    const file =
      relative === ''
        ? from
        : path.posix.normalize(
            relative.startsWith('/') ? relative.slice(1) : path.posix.join(path.posix.dirname(from), relative),
          );
    if (file.startsWith('../') || !pathExists(file)) return false;
    return anchor === undefined || !file.endsWith('.md') || anchors(file).has(anchor);
  };

  const dangling: DanglingReference[] = [];
  for (const file of (options.scanned ?? files).filter((f) => SCANNED.test(f))) {
    const isMarkdown = file.endsWith('.md');
    read(file)
      .split('\n')
      .forEach((text, index) => {
        const report = (target: string): void => {
          dangling.push({ file, line: index + 1, target });
        };
        for (const [name] of text.matchAll(CAPITALISED_DOC)) if (!basenames.has(name)) report(name);
        for (const [, target] of text.matchAll(REPO_PATH))
          if (!resolves(target!.replace(/[.]$/, ''), file)) report(target!);
        if (isMarkdown)
          for (const [, link] of text.matchAll(MARKDOWN_LINK))
            if (!/^[a-z]+:/i.test(link!) && !linkResolves(link!, file)) report(link!);
        if (SOURCE.test(file) && COMMENT.test(text))
          for (const [, target] of text.matchAll(RELATIVE_PATH)) {
            // Rooted paths are checked above; `x.ts` and the like are examples of a pattern.
            if (ROOTED.test(target!) || /\/x\.\w+$/.test(target!)) continue;
            // From the citing file, its package or src folder, or any folder that ends so
            // ("signer http/x.ts" names services/signer/src/http/x.ts).
            const tail = `/${target!.replace(/^(\.\.?\/)+/, '')}`;
            if (!resolves(target!, file) && ![...known].some((k) => k.endsWith(tail))) report(target!);
          }
        if (SOURCE.test(file) && COMMENT.test(text))
          for (const [, name] of text.matchAll(SOURCE_NAME)) {
            if (NOT_FILES.has(name!.toLowerCase()) || basenames.has(name!)) continue;
            if (!stems.has(name!.replace(SOURCE, ''))) report(name!);
          }
      });
  }
  return dangling;
}
