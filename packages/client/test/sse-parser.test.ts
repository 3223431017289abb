import { SseParser, type ServerSentEvent } from '@pmm/client';

function parse(chunks: string[]): ServerSentEvent[] {
  const out: ServerSentEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  return out;
}

describe('SseParser', () => {
  it('default: event, id and data; comments ignored', () => {
    expect(parse([': hi\n\nevent: book\nid: 7\ndata: {"a":1}\n\n'])).toEqual([
      { event: 'book', data: '{"a":1}', lastEventId: '7' },
    ]);
  });

  it('behavior: any split of the bytes gives the same events (LF, CRLF, CR; multi-line data; id persists)', () => {
    const text = 'event: book\r\nid: 1\r\ndata: a\r\ndata: b\r\n\r\nevent: unavailable\rdata:x\r\rdata: m\n\n';
    const want = [
      { event: 'book', data: 'a\nb', lastEventId: '1' },
      { event: 'unavailable', data: 'x', lastEventId: '1' },
      { event: 'message', data: 'm', lastEventId: '1' },
    ];
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j += 3) {
        expect(parse([text.slice(0, i), text.slice(i, j), text.slice(j)])).toEqual(want);
      }
    }
  });

  it('behavior: an event without data is not dispatched; an unfinished event waits for its blank line', () => {
    expect(parse(['event: book\nid: 3\n\n', 'event: book\ndata: x\n'])).toEqual([]);
  });
});
