/**
 * One anvil process per chain (Foundry's node, from the npm package `@foundry-rs/anvil`): spawn,
 * wait until it answers, pause, resume, kill.
 *
 * The binary is spawned directly (not through the package's Node wrapper), so that SIGSTOP and
 * SIGKILL reach the node itself. A native binary cannot preload a parent check, so a small
 * watchdog process (watchdog/node-watchdog.cjs) is started beside it: it kills the node when the
 * process that started it is gone.
 */
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DEVNET_MNEMONIC } from './devnet-keys';
import { assertPortFree } from './free-port';
import { rpcCall } from './rpc';

/** The package root: src/ and dist/ both sit one level below it. */
const PACKAGE_DIR = path.resolve(__dirname, '..');
const WATCHDOG = path.join(PACKAGE_DIR, 'watchdog', 'node-watchdog.cjs');
const READY_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL_BYTES = 4096;
/**
 * The EVM rules every devnet chain runs. Pinned: anvil's default is the newest hardfork, newer
 * than the chains we serve, and the contracts are compiled for cancun (docs/decisions/0065-the-devnet-runs-anvil.md).
 */
export const DEVNET_HARDFORK = 'cancun';

/** The per-platform package that carries the anvil binary (an optional dependency of @foundry-rs/anvil). */
const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': 'anvil-linux-amd64',
  'linux-arm64': 'anvil-linux-arm64',
  'darwin-x64': 'anvil-darwin-amd64',
  'darwin-arm64': 'anvil-darwin-arm64',
  'win32-x64': 'anvil-win32-amd64',
};

let binary: string | undefined;

/** The anvil executable of this platform, resolved through @foundry-rs/anvil's own dependencies. */
export function anvilBinary(): string {
  if (binary) return binary;
  const platform = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!platform) throw new Error(`anvil has no binary for ${process.platform}-${process.arch}`);
  const wrapper = path.dirname(require.resolve('@foundry-rs/anvil/package.json', { paths: [PACKAGE_DIR] }));
  const file = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  binary = require.resolve(`@foundry-rs/${platform}/bin/${file}`, { paths: [wrapper] });
  return binary;
}

export interface AnvilNodeOptions {
  chainId: number;
  port: number;
  /** Interval mining period; 0 means automine. */
  blockIntervalMs: number;
  /** Address to bind; default 127.0.0.1 (0.0.0.0 inside a container). */
  host?: string;
  /** Record each transaction's opcode steps (anvil's --steps-tracing), see StartDevnetOptions. */
  stepsTracing?: boolean;
  /** The block gas limit (anvil's --gas-limit), see StartDevnetOptions. */
  blockGasLimit?: number;
}

/** A hex string of 64 digits (a private key or hash): never copied into an error message. */
const SECRET_LIKE = /0x[0-9a-fA-F]{64}/g;

/** The node could not have its port: another process holds it. */
export class PortInUseError extends Error {}

/** The command line of one devnet node (exported for the tests that check what we ask of anvil). */
export function anvilArgs(options: AnvilNodeOptions): string[] {
  return [
    '--chain-id',
    String(options.chainId),
    '--host',
    options.host ?? '127.0.0.1',
    '--port',
    String(options.port),
    '--hardfork',
    DEVNET_HARDFORK,
    // Explicit, though it is anvil's default too: the deployer is this mnemonic's account #0.
    '--mnemonic',
    DEVNET_MNEMONIC,
    // Interval mining alone (anvil's --block-time takes seconds, fractions allowed); none is automine.
    ...(options.blockIntervalMs > 0 ? ['--block-time', String(options.blockIntervalMs / 1000)] : []),
    ...(options.stepsTracing ? ['--steps-tracing'] : []),
    ...(options.blockGasLimit ? ['--gas-limit', String(options.blockGasLimit)] : []),
    // The node logs every JSON-RPC call and its account keys by default: pipe traffic for nothing.
    ...(process.env.DEVNET_RPC_LOGGING === 'true' ? [] : ['--silent']),
  ];
}

export class AnvilNode {
  readonly rpcUrl: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  private tail = '';

  private constructor(readonly options: AnvilNodeOptions) {
    this.rpcUrl = `http://127.0.0.1:${options.port}`;
    this.child = spawn(anvilBinary(), anvilArgs(options), { stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid !== undefined) {
      const watchdog = spawn(process.execPath, [WATCHDOG], {
        stdio: 'ignore',
        env: { DEVNET_PARENT_PID: String(process.pid), DEVNET_NODE_PID: String(this.child.pid) },
      });
      // It must not keep this process alive; it exits by itself once the node is gone.
      watchdog.unref();
    }
    const keep = (chunk: Buffer): void => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      });
      this.child.on('error', (err) => {
        this.tail += `\nspawn error: ${err.message}`;
        this.exitCode = null;
        resolve(null);
      });
    });
  }

  /** Spawns a node and resolves once it answers eth_chainId with the expected id. */
  static async start(options: AnvilNodeOptions): Promise<AnvilNode> {
    // Otherwise a node already on the port (same chain id) would pass for ours.
    await assertPortFree(options.port).catch((err: Error) => {
      throw new PortInUseError(err.message);
    });
    const node = new AnvilNode(options);
    try {
      await node.waitReady();
    } catch (err) {
      await node.kill();
      throw err;
    }
    return node;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Stops the process (SIGSTOP): its sockets stay open but nothing answers. */
  pause(): void {
    this.signal('SIGSTOP');
    // A signal is delivered asynchronously: wait (at most 200 ms) until the kernel shows the node
    // stopped, so that the caller's next request meets a paused node (seen flaky on a loaded machine).
    const until = Date.now() + 200;
    while (Date.now() < until && processState(this.child.pid) !== 'T') {
      /* spin: a few ms at most */
    }
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  /** SIGKILL (works on a paused process too) and wait until the process is gone. */
  async kill(): Promise<void> {
    if (this.running) this.signal('SIGKILL');
    await this.exited;
  }

  /** Synchronous SIGKILL for process 'exit' handlers, where nothing async runs any more. */
  killNow(): void {
    if (this.running) this.signal('SIGKILL');
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      this.child.kill(sig);
    } catch {
      // already gone: nothing to signal
    }
  }

  private async waitReady(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const expected = `0x${this.options.chainId.toString(16)}`;
    while (Date.now() < deadline) {
      if (!this.running) {
        const message =
          `anvil node for chain ${this.options.chainId} exited (code ${String(this.exitCode)}) before it was ready:\n` +
          this.tail.replace(SECRET_LIKE, '0x<redacted>');
        // Free when checked, taken before anvil bound it.
        throw /Address already in use/.test(this.tail) ? new PortInUseError(message) : new Error(message);
      }
      try {
        const id = await rpcCall(this.rpcUrl, 'eth_chainId', [], 1000);
        if (id === expected) return;
        throw new Error(`port ${this.options.port} answers chain id ${String(id)}, expected ${expected}`);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('port ')) throw err;
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`anvil node for chain ${this.options.chainId} not ready after ${READY_TIMEOUT_MS} ms`);
  }
}

/** A process's state letter from /proc (`T` stopped, `S` sleeping…); undefined where there is no /proc. */
function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}
