/**
 * `node services/signer/dist/cli/audit.js <command>` (`npm run audit -- <command>`): the audit
 * trail for the operator. See AUDIT_USAGE.
 */
import { AUDIT_USAGE, runAuditCommand } from './audit-command';
import { openOperatorContext } from './operator-context';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    process.stdout.write(`${AUDIT_USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const ctx = await openOperatorContext('signer-audit-cli');
  try {
    return await runAuditCommand(argv, {
      trail: ctx.trail,
      chain: (id) => ctx.chain(id),
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    ctx.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`audit: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
