/**
 * An incremental Server-Sent Events parser (WHATWG HTML, "server-sent events", event stream
 * interpretation): feed it decoded text as it arrives; it calls back once per complete event.
 * Lines end with LF, CRLF or CR; a line starting with ':' is a comment; `data` lines are
 * joined with LF; an event without data is not dispatched; `id` persists across events.
 */

/** A line ending; global so that exec searches from `lastIndex` (set before every use). */
const LINE_END = /\r\n|\r|\n/g;

export interface ServerSentEvent {
  event: string;
  data: string;
  /** The last `id` seen on the stream so far (what a reconnect sends as Last-Event-ID). */
  lastEventId: string;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private lastEventId = '';
  /** The previous chunk ended with CR: a LF at the start of the next one belongs to it. */
  private skipLf = false;

  constructor(private readonly onEvent: (event: ServerSentEvent) => void) {}

  push(text: string): void {
    if (text === '') return;
    if (this.skipLf && text.startsWith('\n')) text = text.slice(1);
    this.skipLf = false;
    this.buffer += text;
    let start = 0;
    for (;;) {
      LINE_END.lastIndex = start;
      const found = LINE_END.exec(this.buffer);
      if (!found) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (found[0] === '\r' && found.index === this.buffer.length - 1) this.skipLf = true;
      this.line(this.buffer.slice(start, found.index));
      start = found.index + found[0].length;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), lastEventId: this.lastEventId });
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
  }
}
