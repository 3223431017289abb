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

/** Replaces every registered secret inside `text`. */
export function redactText(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * Field names whose values are never logged, whatever they contain. Deliberately not a bare
 * `token`: `tokenIn`, `quoteToken` and friends are ordinary domain fields here.
 */
export const SECRET_FIELD =
  /(private.?key|secret|password|passwd|api.?key|authorization|mnemonic|internal.?token|auth.?token|access.?token|bearer|keystore)/i;
