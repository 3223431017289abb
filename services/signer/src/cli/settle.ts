/**
 * `node services/signer/dist/cli/settle.js --month YYYY-MM` (`npm run settle -- …`): the fee
 * settlement report of a period. See SETTLE_USAGE.
 */
import { openOperatorContext } from './operator-context';
import { SETTLE_USAGE, runSettleCommand } from './settle-command';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    process.stdout.write(`${SETTLE_USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const ctx = await openOperatorContext('signer-settle-cli');
  try {
    return await runSettleCommand(argv, {
      lookup: ctx.trail,
      chains: ctx.chainIds,
      chain: (id) => ctx.chain(id),
      out: (text) => process.stdout.write(text),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    ctx.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`settle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
