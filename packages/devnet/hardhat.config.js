// Hardhat configuration for ONE devnet node. @pmm/devnet starts one `hardhat node` per chain with
// this file and the environment below; nothing here compiles (sources point at an empty folder),
// so Hardhat never tries to download a compiler. The contracts come precompiled from
// @pmm/contracts (solc-js).
//
//   DEVNET_CHAIN_ID           chain id of this node (required)
//   DEVNET_BLOCK_INTERVAL_MS  interval mining period in ms; 0 means automine (one block per tx)
const os = require('node:os');
const path = require('node:path');
const { subtask } = require('hardhat/config');
const { TASK_NODE_SERVER_READY } = require('hardhat/builtin-tasks/task-names');

const chainId = Number(process.env.DEVNET_CHAIN_ID);
if (!Number.isSafeInteger(chainId) || chainId <= 0) {
  throw new Error('DEVNET_CHAIN_ID must be a positive integer');
}
const interval = Number(process.env.DEVNET_BLOCK_INTERVAL_MS ?? '1000');
if (!Number.isSafeInteger(interval) || interval < 0) {
  throw new Error('DEVNET_BLOCK_INTERVAL_MS must be a non-negative integer');
}

// The stock ready message prints every default account WITH its private key. Those keys are
// public, but our rule is that no key reaches a log: print only the address line.
subtask(TASK_NODE_SERVER_READY).setAction(async ({ address, port }) => {
  console.log(`Started HTTP and WebSocket JSON-RPC server at http://${address}:${port}/`);
});

const scratch = path.join(os.tmpdir(), 'pmm-devnet-hardhat');

/** @type {import('hardhat/config').HardhatUserConfig} */
module.exports = {
  defaultNetwork: 'hardhat',
  networks: {
    hardhat: {
      chainId,
      hardfork: 'cancun',
      // Interval mining alone: `auto: true` plus an interval would add extra blocks.
      mining: interval === 0 ? { auto: true, interval: 0 } : { auto: false, interval },
      // Sub-second intervals would otherwise push block time ahead of the wall clock
      // (each block needs a strictly larger timestamp).
      allowBlocksWithSameTimestamp: true,
      // The node logs every JSON-RPC call by default: a lot of pipe traffic for nothing.
      loggingEnabled: process.env.DEVNET_RPC_LOGGING === 'true',
    },
  },
  paths: {
    sources: path.join(__dirname, 'hardhat', 'empty-sources'),
    cache: path.join(scratch, 'cache'),
    artifacts: path.join(scratch, 'artifacts'),
  },
};
