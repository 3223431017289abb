/**
 * A process-wide registry of secret values (signing keys, tokens, passwords). The config
 * loader registers every secret it loads; the logger replaces any registered value with
 * `[redacted]` wherever it appears, so a secret cannot reach a log line even by accident
 * (inside an error message, a URL, a nested object).
 */

const secrets = new Set<string>();

/** Shortest value worth redacting: shorter ones would mangle ordinary words in logs. */
const MIN_SECRET_LENGTH = 8;

export function registerSecret(value: string): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  secrets.add(value);
  // Hex secrets are also written with or without 0x and in either case.
  if (/^(0x)?[0-9a-fA-F]+$/.test(value)) {
    const bare = value.replace(/^0x/, '');
    secrets.add(bare.toLowerCase());
    secrets.add(bare.toUpperCase());
  }
}

/**
 * The credentials of every URL in `text` (`redis://user:password@host` → `redis://***@host`),
 * masked: for values echoed in configuration errors and for every log line. Up to the last `@`
 * of the authority, so a password with a bare `@` is masked whole. A query parameter whose name
 * says password (a Sentinel URL's `sentinelPassword`) is masked too.
 */
export function maskUrlCredentials(text: string): string {
  const masked = text.includes('@') ? text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s"'?#]*@/gi, '$1***@') : text;
  // Most strings logged hold no `=`: the cheap test first (this runs on every string of every log line).
  return masked.includes('=') && /password=/i.test(masked)
    ? masked.replace(/([?&][^=&\s"'#]*password=)[^&\s"'#]*/gi, '$1***')
    : masked;
}

/**
 * A configured node URL shown without anything that may be a secret: hosted nodes carry the
 * provider's key in the path (`https://x.example/v2/<key>`) or the query (`?apikey=<key>`), so
 * both are masked with the credentials (`https://x.example/***`). Not a URL: masked whole.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '***';
  }
  const credentials = parsed.username || parsed.password ? '***@' : '';
  const rest = (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search || parsed.hash ? '/***' : '';
  return `${parsed.protocol}//${credentials}${parsed.host}${rest}`;
}

/**
 * Every URL in `text` with its credentials, path and query masked (`https://***@x.example/***`):
 * for configuration values echoed in errors, before any URL in them could be registered.
 */
export function maskUrlsInText(text: string): string {
  return maskUrlCredentials(text).replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/\s"'?#]*)[/?#][^\s"']*/gi, '$1/***');
}

/**
 * Registers a configured URL (a chain's rpcUrl or wsUrl) as a secret: its path and query, as
 * written and as URL parsing normalises them, are then redacted wherever they appear, e.g.
 * inside a library's error message that quotes the request URL.
 */
export function registerSecretUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    registerSecret(url);
    return;
  }
  const afterHost = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  for (const part of [afterHost, `${parsed.pathname}${parsed.search}${parsed.hash}`, parsed.pathname, parsed.search])
    if (part !== '/' && part !== '') registerSecret(part);
  if (parsed.password) registerSecret(decodeURIComponent(parsed.password));
}

/** Replaces every registered secret, and every URL's credentials, inside `text`. */
export function redactText(text: string): string {
  let out = maskUrlCredentials(text);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * Field names whose values are never logged, whatever they contain. Deliberately not a bare
 * `token`: `tokenIn`, `quoteToken` and friends are ordinary domain fields here.
 */
export const SECRET_FIELD =
  /(private.?key|secret|password|passwd|api.?key|authorization|mnemonic|internal.?token|auth.?token|access.?token|bearer|keystore)/i;
