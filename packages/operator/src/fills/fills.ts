/**
 * `node packages/operator/dist/fills/fills.js --from … --to …` (`npm run fills -- …`): every
 * signature's fate and the figures per integrator, chain and pair. See FILLS_USAGE.
 */
import { FILLS_USAGE, runFillsCommand } from './fills-command';
import { runOperatorCli } from '../cli/run-operator-command';

runOperatorCli('fills', FILLS_USAGE, (argv, ctx, io) =>
  runFillsCommand(argv, { trail: ctx.trail, ledger: ctx.ledger, ...io }),
);
