/**
 * Redocly CLI's `recommended` rules on the committed OpenAPI document: no problem at all (an
 * exception would need a comment in src/openapi explaining it, and a rule override in
 * redocly.yaml). Offline: telemetry and the update check are off, `lint` needs no login.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OPENAPI_PATH } from '@pmm/gateway';

const root = path.resolve(__dirname, '..', '..', '..', '..');
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');
const config = path.resolve(__dirname, '..', '..', 'redocly.yaml');

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

function lint(file: string): { status: number | null; problems: LintProblem[] } {
  const run = spawnSync(redocly, ['lint', '--config', config, '--format', 'json', '--max-problems', '1000', file], {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
    timeout: 60_000,
  });
  const report = JSON.parse(run.stdout) as { problems: LintProblem[] };
  return { status: run.status, problems: report.problems };
}

describe('OpenAPI document, Redocly recommended lint', () => {
  it('behavior: no error and no warning', () => {
    const { status, problems } = lint(OPENAPI_PATH);
    expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(status).toBe(0);
  });

  it('error: the lint reports a document with an unused component (it can fail)', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { components: { schemas: Record<string, unknown> } };
    doc.components.schemas.Unused = { type: 'string' };
    const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
    try {
      const file = path.join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      expect(lint(file).problems.map((p) => p.ruleId)).toContain('no-unused-components');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
