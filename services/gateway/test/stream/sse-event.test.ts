import { parseLastEventId, sseEvent, SSE_KEEPALIVE } from '../../src/stream/sse-event';

describe('sse framing', () => {
  it('default: event, id, one data line, blank line', () => {
    expect(sseEvent('book', Buffer.from('{"a":1}'), 7).toString()).toBe('event: book\nid: 7\ndata: {"a":1}\n\n');
  });

  it('behavior: no id line without an id; line breaks become several data lines', () => {
    expect(sseEvent('unavailable', 'x').toString()).toBe('event: unavailable\ndata: x\n\n');
    expect(sseEvent('book', 'a\nb\r\nc\rd', 1).toString()).toBe(
      'event: book\nid: 1\ndata: a\ndata: b\ndata: c\ndata: d\n\n',
    );
  });

  it('default: the keep-alive is a comment', () => {
    expect(SSE_KEEPALIVE.toString()).toMatch(/^:[^\n]*\n\n$/);
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    ['0', 0],
    ['12345678', 12345678],
    ['9007199254740991', 9007199254740991],
    ['9007199254740992', null],
    ['12a', null],
    [' 1', null],
    ['-1', null],
    [['1', '2'], null],
  ])('behavior: Last-Event-ID %j → %j', (raw, want) => {
    expect(parseLastEventId(raw as string | string[] | undefined)).toBe(want);
  });
});
