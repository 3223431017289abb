/**
 * Redis Lua scripts live as files, `<package>/commands/<name>.lua` (as BullMQ keeps its own),
 * so they read and diff as Lua, and are defined on a client one way: ioredis `defineCommand`,
 * which sends EVALSHA and falls back to EVAL once after a Redis restart (NOSCRIPT). Defined once
 * per client and name (a client shared by several stores gets one definition).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RedisClient } from './redis-client';

export type LuaCommand<T> = (...keysThenArgs: (string | number)[]) => Promise<T>;

/**
 * The command `name` on `redis`, from `<commandsDir>/<name>.lua` (read once, at definition).
 * `commandsDir` is the package's `commands` folder; see {@link commandsDir}.
 */
export function luaCommand<T>(redis: RedisClient, dir: string, name: string, numberOfKeys: number): LuaCommand<T> {
  const client = redis as RedisClient & Record<string, unknown>;
  if (typeof client[name] !== 'function') {
    redis.defineCommand(name, { numberOfKeys, lua: readFileSync(path.join(dir, `${name}.lua`), 'utf8') });
  }
  return (client[name] as LuaCommand<T>).bind(client);
}

/**
 * The `commands` folder of the package whose module is at `moduleDir`, `levels` folders below the
 * package root: the same from `src/` (tests) and `dist/` (the build), which have the same depth.
 */
export function commandsDir(moduleDir: string, levels: number): string {
  return path.resolve(moduleDir, ...Array<string>(levels).fill('..'), 'commands');
}
