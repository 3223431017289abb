// Loaded first (`--require`, through NODE_OPTIONS for the services, which do not allow
// --cpu-prof there) in each server process of gateway.bench.ts when it profiles: a V8 CPU profile
// of the whole life of the process, written on exit to
// $BENCH_CPU_PROF/<BENCH_CPU_PROF_NAME>-<pid>.cpuprofile (the format of node --cpu-prof, which
// Chrome DevTools opens). The bench cuts it into its cases by the samples' times
// (profile-breakdown.ts: the profile's clock is the monotonic clock of process.hrtime).
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const path = require('node:path');

const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.start');
// The main thread's session answers synchronously: the profile is written before the process ends.
process.on('exit', () => {
  session.post('Profiler.stop', (err, result) => {
    if (err) return;
    const name = `${process.env.BENCH_CPU_PROF_NAME ?? 'node'}-${process.pid}.cpuprofile`;
    writeFileSync(path.join(process.env.BENCH_CPU_PROF, name), JSON.stringify(result.profile));
  });
});
