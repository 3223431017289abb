// Started beside every devnet node. The node (anvil) is a native binary that cannot preload a
// parent check, so this small process does it: it SIGKILLs the node when the process that
// started both is gone (a crashed or SIGKILLed test run or CLI must never leave orphan chains
// holding ports), and exits by itself once the node is gone.
//   DEVNET_PARENT_PID  the starter's pid
//   DEVNET_NODE_PID    the node's pid
const parentPid = Number(process.env.DEVNET_PARENT_PID);
const nodePid = Number(process.env.DEVNET_NODE_PID);
const valid = (pid) => Number.isSafeInteger(pid) && pid > 0;
if (!valid(parentPid) || !valid(nodePid)) process.exit(2);

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

setInterval(() => {
  if (!alive(nodePid)) process.exit(0);
  // Re-parented (to init or a subreaper) means the starter died, even if its pid was reused.
  if (process.ppid !== parentPid || !alive(parentPid)) {
    try {
      process.kill(nodePid, 'SIGKILL');
    } catch {
      // already gone
    }
    process.exit(0);
  }
}, 500);
