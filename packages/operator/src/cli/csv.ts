/**
 * One CSV line (RFC 4180) for the operator's exports. Request ids come from clients, so any
 * field may hold a comma, a quote or a newline (quoted), or start like a spreadsheet formula
 * (`=`, `+`, `-`, `@`: prefixed with `'` so that opening the file never runs it).
 */
export function csvLine(values: readonly (string | number | undefined)[]): string {
  return values
    .map((v) => {
      let text = v === undefined ? '' : String(v);
      if (typeof v === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',');
}
