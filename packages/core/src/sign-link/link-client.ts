/**
 * The gateway's end of the sign link (README.md in this folder): one connection to the signer
 * (or a few, `links`), opened on first use and again after it breaks, carrying every sign
 * request as a frame. Requests written in the same turn of the event loop leave in one write.
 *
 * Failure semantics, as with one HTTP request per quote:
 * - the signer cannot be reached, refuses the upgrade, or the link breaks: every request
 *   waiting on that connection rejects with a {@link SignLinkError} (the gateway answers 503);
 * - the caller gives up on a request (its timeout): `cancel()`; a late answer is dropped. If
 *   nothing at all arrived on the link since that request was written, the link is presumed
 *   stuck and is closed, so the next request opens a fresh one.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { FrameReader, encodeFrame } from './frames';
import {
  SIGN_LINK_PATH,
  SIGN_LINK_PROTOCOL,
  type LinkAnswer,
  type LinkAnswerHead,
  type LinkRequestHead,
} from './link-protocol';

/** `code`: a Node socket error code (ECONNREFUSED, ECONNRESET…), or the link's own LINK_REFUSED, LINK_CLOSED, LINK_MALFORMED. */
export class SignLinkError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SignLinkClientOptions {
  /** The signer's base URL (http or https). */
  url: string;
  /** Headers of the upgrade request (the internal token). */
  headers: Record<string, string>;
  /** The largest answer frame accepted. */
  maxAnswerBytes: number;
  /**
   * Links kept open, requests spread over them in turn (default 1). More than one lets a load
   * balancer or DNS name in front of several signers spread the gateway's requests.
   */
  links?: number;
  /** Told once per link that opens or fails to (logs). */
  onLinkEvent?: (event: 'open' | 'refused' | 'closed', detail: { status?: number; code?: string }) => void;
}

export interface SignLinkExchange {
  answer: Promise<LinkAnswer>;
  /** Stop waiting (the caller answered already); a late answer is dropped. */
  cancel(): void;
}

interface Waiting {
  resolve(answer: LinkAnswer): void;
  reject(err: SignLinkError): void;
  /** Bytes received on the link when the request was written. */
  receivedAtSend: number;
}

/**
 * An answer's head, checked: the gateway writes it to its client, and a status node:http
 * rejects (or headers that are not strings) would throw there, with the client left waiting.
 */
function parseAnswerHead(text: string): LinkAnswerHead {
  const head = JSON.parse(text) as Partial<LinkAnswerHead> | null;
  if (
    typeof head !== 'object' ||
    head === null ||
    !Number.isInteger(head.status) ||
    head.status! < 100 ||
    head.status! > 999 ||
    typeof head.headers !== 'object' ||
    head.headers === null ||
    !Object.values(head.headers).every((v) => typeof v === 'string')
  )
    throw new Error('answer head is not {status, headers}');
  return head as LinkAnswerHead;
}

/** One connection attempt and, once upgraded, the link it became. */
class Link {
  socket?: Socket;
  readonly waiting = new Map<number, Waiting>();
  private out: Buffer[] = [];
  private flushScheduled = false;
  received = 0;
  ended = false;
  /** Settles once: resolved when the signer upgrades, rejected when the link ends before that. */
  readonly opened: Promise<void>;
  private settleOpened!: (err?: SignLinkError) => void;
  private readonly upgrade: ClientRequest;

  constructor(
    private readonly opts: SignLinkClientOptions,
    private readonly onEnd: (link: Link) => void,
  ) {
    this.opened = new Promise<void>((resolve, reject) => {
      this.settleOpened = (err) => (err ? reject(err) : resolve());
    });
    // Only readiness checks wait on it; requests learn of a failure through their own promise.
    this.opened.catch(() => undefined);
    const target = new URL(SIGN_LINK_PATH, opts.url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    this.upgrade = send(target, {
      method: 'GET',
      agent: false,
      headers: { ...opts.headers, Connection: 'Upgrade', Upgrade: SIGN_LINK_PROTOCOL },
    });
    this.upgrade.on('upgrade', (_res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (this.ended) return void socket.destroy();
      this.socket = socket;
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 30_000);
      const reader = new FrameReader(opts.maxAnswerBytes);
      const onData = (chunk: Buffer) => {
        this.received += chunk.length;
        try {
          for (const frame of reader.push(chunk)) {
            const entry = this.waiting.get(frame.id);
            if (!entry) continue; // cancelled
            // Before it leaves the waiting map: a malformed answer fails its own request too.
            const head = parseAnswerHead(frame.head);
            this.waiting.delete(frame.id);
            entry.resolve({ status: head.status, headers: head.headers, body: frame.body });
          }
        } catch (err) {
          this.fail(new SignLinkError('LINK_MALFORMED', `malformed answer frame: ${(err as Error).message}`));
        }
      };
      socket.on('data', onData);
      socket.on('error', (err: NodeJS.ErrnoException) =>
        this.fail(new SignLinkError(err.code ?? 'LINK_CLOSED', err.message)),
      );
      socket.on('close', () => this.fail(new SignLinkError('LINK_CLOSED', 'the signer closed the sign link')));
      opts.onLinkEvent?.('open', {});
      this.settleOpened();
      if (head.length > 0) onData(head);
      this.flush();
    });
    this.upgrade.on('response', (res: IncomingMessage) => {
      // Not upgraded: the signer said why (401 wrong internal token, 404 an older signer…).
      res.resume();
      opts.onLinkEvent?.('refused', { status: res.statusCode });
      this.fail(new SignLinkError('LINK_REFUSED', `the signer refused the sign link (HTTP ${res.statusCode})`));
    });
    this.upgrade.on('error', (err: NodeJS.ErrnoException) =>
      this.fail(new SignLinkError(err.code ?? 'LINK_CLOSED', err.message)),
    );
    this.upgrade.end();
  }

  send(id: number, frame: Buffer, entry: Waiting): void {
    this.waiting.set(id, entry);
    this.out.push(frame);
    if (this.socket && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (!this.socket || this.ended || this.out.length === 0) return;
    const frames = this.out;
    this.out = [];
    this.socket.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
  }

  /** Ends the link: every request still waiting rejects with `err`. */
  fail(err: SignLinkError): void {
    if (this.ended) return;
    this.ended = true;
    this.settleOpened(err);
    this.onEnd(this);
    if (this.socket) this.opts.onLinkEvent?.('closed', { code: err.code });
    this.upgrade.destroy();
    this.socket?.destroy();
    this.out = [];
    for (const entry of this.waiting.values()) entry.reject(err);
    this.waiting.clear();
  }
}

export class SignLinkClient {
  private readonly links: (Link | undefined)[];
  private nextId = 0;
  private turn = 0;

  constructor(private readonly opts: SignLinkClientOptions) {
    this.links = new Array<Link | undefined>(Math.max(1, opts.links ?? 1)).fill(undefined);
  }

  /** The link of `slot`, opened if there is none. */
  private linkAt(slot: number): Link {
    return (this.links[slot] ??= new Link(this.opts, (ended) => {
      if (this.links[slot] === ended) this.links[slot] = undefined;
    }));
  }

  /**
   * Resolves once a link is open, opening one if none is; rejects with why the signer cannot
   * be reached or refuses (the gateway's readiness check: a wrong INTERNAL_TOKEN shows there).
   */
  ready(): Promise<void> {
    const open = this.links.find((link) => link?.socket && !link.ended);
    return open ? Promise.resolve() : this.linkAt(0).opened;
  }

  request(head: LinkRequestHead, body: Buffer): SignLinkExchange {
    const link = this.linkAt((this.turn = (this.turn + 1) % this.links.length));
    // Ids wrap at 2^32; far more than can be in flight at once.
    const id = (this.nextId = (this.nextId + 1) >>> 0);
    let entry!: Waiting;
    const answer = new Promise<LinkAnswer>((resolve, reject) => {
      entry = { resolve, reject, receivedAtSend: link.received };
    });
    link.send(id, encodeFrame(id, JSON.stringify(head), body), entry);
    return {
      answer,
      cancel: () => {
        if (!link.waiting.delete(id)) return;
        if (link.received === entry.receivedAtSend)
          link.fail(new SignLinkError('LINK_CLOSED', 'the sign link answered nothing within the request timeout'));
      },
    };
  }

  /** Closes the links; requests still waiting reject. */
  close(): void {
    for (const link of this.links) link?.fail(new SignLinkError('LINK_CLOSED', 'the gateway closed the sign link'));
  }
}
