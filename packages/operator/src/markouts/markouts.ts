/**
 * `node packages/operator/dist/markouts/markouts.js --from … --to …` (`npm run markouts -- …`): the
 * maker's ledger with its markouts. See MARKOUTS_USAGE.
 */
import { MARKOUTS_USAGE, runMarkoutsCommand } from './markouts-command';
import { runOperatorCli } from '../cli/run-operator-command';

runOperatorCli('markouts', MARKOUTS_USAGE, (argv, ctx, io) => runMarkoutsCommand(argv, { ledger: ctx.ledger, ...io }));
