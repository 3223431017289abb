/**
 * `node packages/operator/dist/audit/audit.js <command>` (`npm run audit -- <command>`): the audit
 * trail for the operator. See AUDIT_USAGE.
 */
import { AUDIT_USAGE, runAuditCommand } from './audit-command';
import { runOperatorCli } from '../cli/run-operator-command';

runOperatorCli('audit', AUDIT_USAGE, (argv, ctx, io) =>
  runAuditCommand(argv, {
    trail: ctx.trail,
    chain: (id) => ctx.chain(id),
    out: (line) => io.out(`${line}\n`),
    err: io.err,
  }),
);
