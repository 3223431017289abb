import { Writable } from 'node:stream';
import { ApiError } from '@pmm/protocol';
import { createLogger, LazyRequestContext, registerSecret } from '@pmm/core';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger({ service: 'test', stream, level: 'debug' }) };
}

describe('logger', () => {
  const key = '0x' + 'ab'.repeat(32);
  beforeAll(() => registerSecret(key));

  it('default: writes one JSON line with service, level, message and fields', () => {
    const { lines, logger } = capture();
    logger.info('hello', { chainId: 8453 });
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ service: 'test', level: 'info', message: 'hello', chainId: 8453 });
  });

  it('behavior: a registered secret is masked anywhere: message, nested field, error text, bare hex', () => {
    const { lines, logger } = capture();
    logger.info(`key is ${key}`, {
      nested: { deeper: [`x${key.slice(2).toUpperCase()}y`] },
      error: new Error(`failed with ${key}`),
    });
    const text = lines.join('');
    expect(text).not.toContain(key.slice(2));
    expect(text).not.toContain(key.slice(2).toUpperCase());
    expect(text).toContain('[redacted]');
  });

  it('behavior: an error is logged with its chain of causes, each masked like the rest', () => {
    const { lines, logger } = capture();
    const root = Object.assign(new Error(`connect ECONNREFUSED with ${key}`), { code: 'ECONNREFUSED' });
    const wrapped = new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly', {}, { cause: root });
    logger.error('request failed', { error: wrapped });
    const error = JSON.parse(lines[0]!).error as string;
    expect(error).toMatch(/^ApiError: signer unavailable, retry shortly\n/);
    expect(error).toContain('caused by: Error: connect ECONNREFUSED with [redacted]');
    expect(error).not.toContain(key.slice(2));
  });

  it('behavior: redaction has no depth limit: a secret nested 20 levels down is masked, by value and by name', () => {
    const { lines, logger } = capture();
    let nested: Record<string, unknown> = { note: `deep ${key}`, password: 'hunter2-plain' };
    for (let i = 0; i < 20; i++) nested = { level: i, nested };
    const cyclic: Record<string, unknown> = { url: 'redis://:pw-in-a-cycle@host:6379' };
    cyclic.self = cyclic;
    logger.info('deep', { nested, cyclic });
    const text = lines.join('');
    expect(text).not.toContain(key.slice(2));
    expect(text).not.toContain('hunter2-plain');
    expect(text).not.toContain('pw-in-a-cycle');
    expect(text).toContain('"password":"[redacted]"');
    expect(JSON.parse(lines[0]!).cyclic).toEqual({ url: 'redis://***@host:6379', self: '[circular]' });
    // Absurdly deep values are cut, never passed through.
    let abyss: unknown = `bottom ${key}`;
    for (let i = 0; i < 200; i++) abyss = [abyss];
    logger.info('abyss', { abyss });
    expect(lines[1]).not.toContain(key.slice(2));
    expect(lines[1]).toContain('[truncated]');
  });

  it("behavior: a URL's credentials are masked in any log line", () => {
    const { lines, logger } = capture();
    logger.warn('redis error at redis://app:s3cret-pass@redis.internal:6379/0', {
      url: 'rediss://user:p@ss@host:6380',
    });
    expect(lines[0]).not.toContain('s3cret-pass');
    expect(lines[0]).not.toContain('p@ss');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      message: 'redis error at redis://***@redis.internal:6379/0',
      url: 'rediss://***@host:6380',
    });
  });

  it("behavior: a Sentinel URL's password parameters are masked in any log line, the master name kept", () => {
    const { lines, logger } = capture();
    logger.warn('at redis-sentinel://***@s1:26379,s2:26379/pmm?sentinelUsername=watcher&sentinelPassword=hunter2-x', {
      url: 'rediss-sentinel://s1:26379/pmm?sentinelPassword=a%26b-secret',
    });
    expect(lines[0]).not.toContain('hunter2-x');
    expect(lines[0]).not.toContain('secret');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      message: 'at redis-sentinel://***@s1:26379,s2:26379/pmm?sentinelUsername=watcher&sentinelPassword=***',
      url: 'rediss-sentinel://s1:26379/pmm?sentinelPassword=***',
    });
  });

  it('behavior: fields with secret-looking names are dropped whatever they hold', () => {
    const { lines, logger } = capture();
    logger.info('cfg', {
      privateKey: 'short',
      apiKey: 'k',
      internalToken: 't',
      headers: { 'x-api-key': 'abc', accept: 'json' },
    });
    const line = JSON.parse(lines[0]!);
    expect(line.privateKey).toBe('[redacted]');
    expect(line.apiKey).toBe('[redacted]');
    expect(line.internalToken).toBe('[redacted]');
    expect(line.headers).toEqual({ 'x-api-key': '[redacted]', accept: 'json' });
  });

  it('behavior: errors keep their stack (not logged as {})', () => {
    const { lines, logger } = capture();
    logger.error('boom', { error: new Error('kaput') });
    expect(JSON.parse(lines[0]!).error).toContain('Error: kaput');
  });
});

describe('logger field names', () => {
  it('behavior: domain fields that merely contain "token" are logged as they are', () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    createLogger({ service: 'test', stream }).info('pair', {
      tokenIn: '0xabc',
      quoteToken: '0xdef',
      internalToken: 'x',
    });
    expect(JSON.parse(lines[0]!)).toMatchObject({ tokenIn: '0xabc', quoteToken: '0xdef', internalToken: '[redacted]' });
  });
});

describe('LazyRequestContext', () => {
  it('behavior: makes no child logger until something logs, and its lines carry the request id and bound fields', () => {
    const { lines, logger } = capture();
    const child = jest.spyOn(logger, 'child');
    const ctx = new LazyRequestContext('rid-1', 0n, logger);
    ctx.bind({ integratorId: 'acme' });
    expect(child).not.toHaveBeenCalled();
    ctx.log.info('first');
    ctx.bind({ chainId: 56 });
    ctx.log.info('second');
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ message: 'first', requestId: 'rid-1', integratorId: 'acme' });
    expect(first).not.toHaveProperty('chainId');
    expect(second).toMatchObject({ message: 'second', requestId: 'rid-1', integratorId: 'acme', chainId: 56 });
  });
});
