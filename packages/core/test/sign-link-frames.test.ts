import { FrameError, FrameReader, encodeFrame } from '../src/sign-link/frames';

const frame = (id: number, head: unknown, body: string) => encodeFrame(id, JSON.stringify(head), Buffer.from(body));

describe('sign link frames', () => {
  it('behavior: a frame reads back as written: id, head text (UTF-8), body bytes', () => {
    const reader = new FrameReader(1024);
    const [got, ...rest] = reader.push(frame(7, { path: '/v2/swap/sign', é: '€' }, '{"a":"ü"}'));
    expect(rest).toEqual([]);
    expect(got!.id).toBe(7);
    expect(JSON.parse(got!.head)).toEqual({ path: '/v2/swap/sign', é: '€' });
    expect(got!.body.toString('utf8')).toBe('{"a":"ü"}');
  });

  it('behavior: frames split anywhere, or many in one chunk, come out whole and in order', () => {
    const bytes = Buffer.concat([
      frame(1, { n: 1 }, 'one'),
      frame(2, { n: 2 }, ''),
      frame(4294967295, {}, 'x'.repeat(300)),
    ]);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const reader = new FrameReader(1024);
      // Byte by byte around the cut, then the rest at once.
      const pieces = [bytes.subarray(0, cut), bytes.subarray(cut, cut + 1), bytes.subarray(cut + 1)];
      const frames = pieces.flatMap((p) => reader.push(p));
      expect(frames.map((f) => [f.id, f.head, f.body.length])).toEqual([
        [1, '{"n":1}', 3],
        [2, '{"n":2}', 0],
        [4294967295, '{}', 300],
      ]);
    }
  });

  it('error: a frame larger than the limit is refused from its size field, before its bytes arrive', () => {
    const reader = new FrameReader(64);
    const big = frame(1, {}, 'x'.repeat(100));
    expect(() => reader.push(big.subarray(0, 4))).toThrow(FrameError);
  });

  it('error: a head longer than its frame, or a frame too short for its prefix, is refused', () => {
    const overrun = frame(1, { a: 1 }, 'body');
    overrun.writeUInt32BE(1000, 8);
    expect(() => new FrameReader(1024).push(overrun)).toThrow(/overruns/);
    const short = Buffer.alloc(8);
    short.writeUInt32BE(4, 0);
    expect(() => new FrameReader(1024).push(short)).toThrow(FrameError);
  });
});
