/**
 * The curl commands of the document (`x-codeSamples`, which Redoc shows beside each operation):
 * built from the same path, query and body examples as the rest of the operation, against the
 * document's default server, with the key from the `PMM_API_KEY` environment variable.
 */

/** The document's default server (`servers[0]`), and the base URL of every sample. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface CodeSample {
  lang: 'Shell';
  label: string;
  source: string;
}

const KEY_HEADER = `-H "X-API-KEY: $PMM_API_KEY"`;

/** Single-quotes a word for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `curl` of a GET, with the extra request headers given (`Name: value`). */
export function curlGet(
  label: string,
  pathAndQuery: string,
  opts: { stream?: boolean; headers?: string[] } = {},
): CodeSample {
  const flags = opts.stream ? '-N' : '-sS';
  const headers = [KEY_HEADER, ...(opts.headers ?? []).map((h) => `-H ${shellQuote(h)}`)].join(' ');
  return {
    lang: 'Shell',
    label,
    source: `curl ${flags} ${headers} ${shellQuote(`${DEFAULT_BASE_URL}${pathAndQuery}`)}`,
  };
}

/** `curl` of a JSON POST with `body`. */
export function curlPost(label: string, path: string, body: unknown): CodeSample {
  return {
    lang: 'Shell',
    label,
    source: [
      `curl -sS -X POST ${shellQuote(`${DEFAULT_BASE_URL}${path}`)} \\`,
      `  ${KEY_HEADER} -H 'Content-Type: application/json' \\`,
      `  -d ${shellQuote(JSON.stringify(body))}`,
    ].join('\n'),
  };
}
