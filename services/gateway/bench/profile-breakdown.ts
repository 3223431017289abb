/**
 * Where a server process's CPU goes per request: a V8 CPU profile (the whole life of the process,
 * cpu-profile-hook.cjs), cut to one bench case's time window, turned into µs per request by step. Each sample is charged to the function
 * running at that moment (self time), and the function to the step its file belongs to: the
 * socket writes (the write syscalls, where loopback TCP does the receiver's work too), signing,
 * keccak, ioredis, Node's HTTP machinery, our own code by package, garbage collection; native
 * code none of these names keeps its own name.
 * Used by gateway.bench.ts with BENCH_PROFILE=1 (the profiler slows the servers down: the
 * figures of a profiled run are for the breakdown, not for the ratios).
 */
import type { Profiler } from 'node:inspector';

interface Step {
  name: string;
  /** Matches a sample's function: its script URL (may be empty for native code) and name. */
  test(url: string, fn: string): boolean;
}

const within =
  (...parts: string[]) =>
  (url: string) =>
    parts.some((p) => url.includes(p));
/** A service's own code: its build (the services run from it) or its source (the in-process composition). */
const serviceCode = (service: string) => within(...['src', 'dist'].map((dir) => `services/${service}/${dir}/`));
const nodeHttp = within(
  'node:_http',
  'node:http',
  'node:net',
  'node:internal/stream',
  'node:internal/streams',
  'node:events',
  'node:buffer',
  'node:internal/timers',
  'node:timers',
  'node:internal/process/task_queues',
  'node:internal/async_hooks',
);
const SYSCALL_WRITES = new Set(['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String', 'writeAsciiString']);

/** Native entries charged to themselves rather than to their caller. */
const SELF_NAMED = new Set(['(garbage collector)', '(program)']);

/** In order: the first step that matches takes the sample. */
const STEPS: Step[] = [
  { name: 'garbage collection', test: (_u, fn) => fn === '(garbage collector)' },
  { name: 'socket writes (syscalls)', test: (u, fn) => u === '' && SYSCALL_WRITES.has(fn) },
  { name: 'secp256k1 signing (native)', test: within('secp256k1') },
  { name: 'keccak-256 (js-sha3)', test: within('js-sha3', 'protocol/src/abi/keccak256') },
  {
    name: 'ioredis',
    test: within('ioredis', 'standard-as-callback', 'redis-parser', 'cluster-key-slot', 'denque'),
  },
  {
    name: 'metrics (prom-client)',
    test: within('prom-client', 'core/src/http/http-metrics'),
  },
  { name: 'logging (winston)', test: within('winston', 'logform') },
  // ajv's compiled validators have no URL: they are charged to the protocol code that calls them.
  { name: 'ajv', test: within('/ajv') },
  { name: 'node:crypto (API key hash, UUIDs)', test: within('node:internal/crypto') },
  { name: 'Node HTTP, streams, buffers, events, timers', test: nodeHttp },
  { name: 'protocol (parse, validate, ABI, EIP-712)', test: within('packages/protocol/') },
  { name: 'core (service kit)', test: within('packages/core/') },
  { name: 'gateway code', test: serviceCode('gateway') },
  { name: 'signer code', test: serviceCode('signer') },
];

export interface StepCost {
  name: string;
  /** CPU µs per request charged to this step. */
  us: number;
}

/** µs per request by step, largest first; idle time is left out. */
export function profileBreakdown(profile: Profiler.Profile, requests: number): StepCost[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  // V8 names native functions unreliably (a native sign can show up as another method of the
  // same addon), so native code is charged to the JavaScript that called it, except the
  // entries that name themselves: GC, the write syscalls, V8's "(program)".
  const stepOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { url, functionName } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(root)') continue;
    let frame = node;
    if (url === '' && !SELF_NAMED.has(functionName) && !SYSCALL_WRITES.has(functionName)) {
      while (frame.callFrame.url === '' && parentOf.has(frame.id)) frame = byId.get(parentOf.get(frame.id)!)!;
    }
    const at = frame.callFrame;
    const step =
      STEPS.find((s) => s.test(at.url, at.functionName))?.name ??
      (at.url === '' ? `native: ${functionName}` : 'other JavaScript (other libraries, the bench servers)');
    stepOf.set(node.id, step);
  }
  const totals = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time since the previous sample: charge it to sample i.
  for (let i = 0; i < samples.length; i++) {
    const step = stepOf.get(samples[i]!);
    if (step !== undefined) totals.set(step, (totals.get(step) ?? 0) + (deltas[i] ?? 0));
  }
  return [...totals].map(([name, us]) => ({ name, us: us / Math.max(1, requests) })).sort((a, b) => b.us - a.us);
}

/**
 * The part of `profile` sampled between `fromUs` and `toUs` (the monotonic clock in µs, as
 * `process.hrtime.bigint() / 1000n` reads it in any process of the machine).
 */
export function profileWindow(profile: Profiler.Profile, fromUs: number, toUs: number): Profiler.Profile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  const deltas = profile.timeDeltas ?? [];
  let at = profile.startTime;
  (profile.samples ?? []).forEach((sample, i) => {
    at += deltas[i] ?? 0;
    if (at >= fromUs && at < toUs) {
      samples.push(sample);
      timeDeltas.push(deltas[i] ?? 0);
    }
  });
  return { ...profile, startTime: fromUs, endTime: toUs, samples, timeDeltas };
}
