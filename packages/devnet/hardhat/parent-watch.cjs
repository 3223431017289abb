// Preloaded into every devnet node (`node -r parent-watch.cjs hardhat node ...`): the node exits
// when the process that started it is gone, so a crashed or SIGKILLed test run or CLI never
// leaves orphan chains holding ports. DEVNET_PARENT_PID is the starter's pid.
const parentPid = Number(process.env.DEVNET_PARENT_PID);
if (Number.isSafeInteger(parentPid) && parentPid > 0) {
  const timer = setInterval(() => {
    let alive = process.ppid === parentPid;
    if (alive) {
      try {
        process.kill(parentPid, 0);
      } catch {
        alive = false;
      }
    }
    if (!alive) process.exit(0);
  }, 500);
  timer.unref();
}
