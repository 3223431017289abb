/**
 * A service for run-service.test.ts, run as its own process: FIXTURE_MODE picks how it starts.
 * On close it prints "closed" so the test sees the shutdown order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError, listen, runService, settings } from '@pmm/core';

const mode = process.env.FIXTURE_MODE;

void runService({
  name: 'fixture',
  settings: { port: settings.int('PORT', 'Port.', 0, [0, 65_535]) },
  loadConfig: () => {
    if (mode === 'bad-config') throw new ConfigError('PORT: must be an integer');
    return { logLevel: 'info' as const };
  },
  start: async () => {
    if (mode === 'throw') throw new Error('boom: sk-should-not-print');
    if (mode === 'reject') void Promise.reject(new Error('nobody awaited this'));
    const served = await listen((_req: IncomingMessage, res: ServerResponse) => res.end('ok'), 0, '127.0.0.1');
    console.log(`listening ${served.port}`);
    return { served: [served], close: async () => console.log('closed') };
  },
});
