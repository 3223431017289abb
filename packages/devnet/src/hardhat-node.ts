/**
 * One `hardhat node` child process per chain: spawn, wait until it answers, pause, resume, kill.
 *
 * The child is `node -r hardhat/parent-watch.cjs <hardhat cli> node ...` run with this package's
 * hardhat.config.js, so it compiles nothing and exits by itself when its parent dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { assertPortFree } from './free-port';
import { rpcCall } from './rpc';

/** The package root: src/ and dist/ both sit one level below it. */
const PACKAGE_DIR = path.resolve(__dirname, '..');
const HARDHAT_CONFIG = path.join(PACKAGE_DIR, 'hardhat.config.js');
const PARENT_WATCH = path.join(PACKAGE_DIR, 'hardhat', 'parent-watch.cjs');
const READY_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL_BYTES = 4096;

export interface HardhatNodeOptions {
  chainId: number;
  port: number;
  /** Interval mining period; 0 means automine. */
  blockIntervalMs: number;
  /** Address to bind; default 127.0.0.1 (0.0.0.0 inside a container). */
  host?: string;
}

/** A hex string of 64 digits (a private key or hash): never copied into an error message. */
const SECRET_LIKE = /0x[0-9a-fA-F]{64}/g;

export class HardhatNode {
  readonly rpcUrl: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  private tail = '';

  private constructor(readonly options: HardhatNodeOptions) {
    this.rpcUrl = `http://127.0.0.1:${options.port}`;
    const cli = require.resolve('hardhat/internal/cli/cli', { paths: [PACKAGE_DIR] });
    this.child = spawn(
      process.execPath,
      [
        '-r',
        PARENT_WATCH,
        cli,
        'node',
        '--hostname',
        options.host ?? '127.0.0.1',
        '--port',
        String(options.port),
        '--config',
        HARDHAT_CONFIG,
      ],
      {
        cwd: PACKAGE_DIR,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          DEVNET_CHAIN_ID: String(options.chainId),
          DEVNET_BLOCK_INTERVAL_MS: String(options.blockIntervalMs),
          DEVNET_PARENT_PID: String(process.pid),
          HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
        },
      },
    );
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
  static async start(options: HardhatNodeOptions): Promise<HardhatNode> {
    // Otherwise a node already on the port (same chain id) would pass for ours.
    await assertPortFree(options.port);
    const node = new HardhatNode(options);
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
        throw new Error(
          `hardhat node for chain ${this.options.chainId} exited (code ${String(this.exitCode)}) before it was ready:\n` +
            this.tail.replace(SECRET_LIKE, '0x<redacted>'),
        );
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
    throw new Error(`hardhat node for chain ${this.options.chainId} not ready after ${READY_TIMEOUT_MS} ms`);
  }
}
