// `npm start` (after ensure.mjs). For now: the three-chain devnet only; the services join as
// they are built (see README).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';

const child = spawn(process.execPath, [path.join(root, 'packages/devnet/dist/cli.js')], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
