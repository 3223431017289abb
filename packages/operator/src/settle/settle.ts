/**
 * `node packages/operator/dist/settle/settle.js --month YYYY-MM` (`npm run settle -- …`): the fee
 * settlement report of a period. See SETTLE_USAGE.
 */
import { runOperatorCli } from '../cli/run-operator-command';
import { SETTLE_USAGE, runSettleCommand } from './settle-command';

runOperatorCli('settle', SETTLE_USAGE, (argv, ctx, io) =>
  runSettleCommand(argv, { lookup: ctx.trail, chains: ctx.chainIds, chain: (id) => ctx.chain(id), ...io }),
);
