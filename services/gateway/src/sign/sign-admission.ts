/**
 * What keeps a sign from leaving the gateway late (docs/decisions/0071-past-capacity-a-fast-no.md):
 *
 * - Its deadline: SIGN_DEADLINE_MS from when its request head arrived: from when it was read
 *   (`start`, the sign route's first step, before the key) less the event loop's current delay
 *   (core loop-lag.ts: how long it most likely waited to be read); the time its body takes to
 *   arrive is the client's and moves the deadline on. One that has lost so much in the queue
 *   that the rest cannot fit is refused at once (`queue`). Before each later step (the rate limit, the body, the
 *   request to the signer: `gate`, `admit`) what is left must cover what the signer has been
 *   taking lately; and whatever step is under way when the deadline falls due, the client is
 *   answered then (a body still arriving is the request timeout's: 408). A request already at
 *   the signer is not cut: it keeps its slot and its pooled connection until the signer answers,
 *   which works to the same deadline (what is left of it travels in the request).
 * - The bound on sign requests at the signer at once (SIGNER_MAX_IN_FLIGHT): past it, refused
 *   at once rather than queued behind requests that are already late. While it is full, a sign
 *   is refused at the door of the public port (`door`, before the route table: no frame, route,
 *   key, rate limit or body): past capacity the refusals are most of the traffic, and on shared
 *   cores their CPU is taken from the signer.
 *
 * Both refusals are 503 SERVICE_UNAVAILABLE with Retry-After, counted by reason (core
 * refusals.ts) and logged quietly: a burst of them must not flood the log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toErrorEnvelope, v1DeprecationHeaders } from '@pmm/protocol';
import {
  Deadline,
  deadlineRefusal,
  InFlightLimit,
  localsOf,
  overloadRefusal,
  processLoopLag,
  refusalMetrics,
  requestIdOf,
  sendError,
  StepTime,
  type HttpRequestMetrics,
  type Logger,
  type Metrics,
  type RefusalError,
  type Step,
} from '@pmm/core';
import { ROUTES } from '../http/public-routes';

/** The steps of a sign at the gateway, as the deadline refusals name them. */
export const GATEWAY_DEADLINE_REASONS = ['queue', 'key', 'rate_limit', 'body', 'signer'] as const;
export type GatewaySignStep = (typeof GATEWAY_DEADLINE_REASONS)[number];
/** The gateway's one bound: sign requests at the signer. */
export const GATEWAY_OVERLOAD_REASONS = ['in_flight'] as const;

interface SignState {
  deadline: Deadline;
  /** The step under way (or next). */
  step: GatewaySignStep;
  /** When the body began to be read (the `body` gate). */
  bodyFrom?: number;
  /** Answered by the deadline's timer. */
  expired: boolean;
  timer?: NodeJS.Timeout;
}

export interface SignAdmissionOptions {
  deadlineMs: number;
  maxInFlight: number;
  metrics: Metrics;
  logger?: Logger;
}

export interface SignAdmission {
  /** The sign route's first step: the deadline starts, and its timer. */
  start: Step;
  /** A step that lets the request on to `step` only while the deadline allows it. */
  gate(step: GatewaySignStep): Step;

  /**
   * Before the request to the signer, the body read: the deadline, then a slot. Resolves the
   * deadline and the slot's release; or answers the refusal itself and returns undefined (also
   * when the request was answered already).
   */
  admit(res: ServerResponse): { deadline: Deadline; release: () => void } | undefined;
  /** Whether the deadline's timer answered the request (its request to the signer is then left to end). */
  expired(res: ServerResponse): boolean;
  /**
   * The door of the public port, for the listener to call before its route table: true when it
   * answered (a sign while the bound is full), false to let the table answer.
   */
  door(opts: DoorOptions): (req: IncomingMessage, res: ServerResponse) => boolean;
  /** How long the signer has been taking to answer (the forwarder records each answer). */
  readonly signerTime: StepTime;
  readonly limit: InFlightLimit;
}

export interface DoorOptions {
  /** The headers every answer of the public port carries (its security headers). */
  headers: ReadonlyArray<readonly [string, string]>;
  /** The request counter and latency of the route table's frame: a refusal at the door counts as one of its 503s. */
  recorder: HttpRequestMetrics;
  /** Whether `/v1/swap/sign` is served. */
  v1: boolean;
}

/** A first estimate of the signer's answer, until the first answers are timed. */
const SIGNER_TIME_INITIAL_MS = 5;

export function signAdmission(opts: SignAdmissionOptions): SignAdmission {
  const states = new WeakMap<ServerResponse, SignState>();
  const limit = new InFlightLimit(opts.maxInFlight);
  const signerTime = new StepTime(SIGNER_TIME_INITIAL_MS);
  const counted = refusalMetrics(opts.metrics, {
    service: 'gateway',
    reasons: { overload: GATEWAY_OVERLOAD_REASONS, deadline: GATEWAY_DEADLINE_REASONS },
    limit,
    logger: opts.logger,
  });

  const refuse = (res: ServerResponse, err: RefusalError) => {
    counted.refused(err);
    localsOf(res).quiet = true;
    sendError(res, err);
  };

  /** The deadline when `step` may start now; else the refusal is answered (unless an answer left already). */
  const check = (res: ServerResponse, step: GatewaySignStep): Deadline | undefined => {
    const state = states.get(res);
    if (!state) throw new Error('sign admission: no deadline (the route must start with its start step)');
    if (res.headersSent) return undefined;
    state.step = step;
    if (state.deadline.allows(signerTime)) return state.deadline;
    refuse(res, deadlineRefusal(step));
    return undefined;
  };

  const lag = processLoopLag();

  /** (Re)arms the timer that answers at the deadline, whatever step is under way then. */
  const armTimer = (req: IncomingMessage, res: ServerResponse, state: SignState) => {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      // A body still arriving is the client's: when it is in, the deadline moves on by the wait
      // (bodyRead), and if it never is, the request timeout answers (408).
      if (res.headersSent || (state.step === 'body' && !req.complete)) return;
      state.expired = true;
      refuse(res, deadlineRefusal(state.step));
    }, state.deadline.left());
  };

  /**
   * The body has been read: the time it took to arrive is the client's, not counted against the
   * deadline, which moves on by as much (a body already there when its step began costs nothing).
   */
  const bodyRead = (res: ServerResponse) => {
    const state = states.get(res);
    if (!state?.bodyFrom || res.headersSent) return;
    const waited = Date.now() - state.bodyFrom;
    state.bodyFrom = undefined;
    if (waited <= 0) return;
    state.deadline = new Deadline(state.deadline.at + waited, state.deadline.budgetMs);
    armTimer(res.req, res, state);
  };

  const door = (opts: DoorOptions) => {
    const err = overloadRefusal('in_flight');
    // The answer's fixed headers as one flat list, made once (Node's writeHead takes it as it is).
    const fixed = [
      ...opts.headers.flat(),
      ...Object.entries(toErrorEnvelope(err, '').headers).flat(),
      'Content-Type',
      'application/json; charset=utf-8',
    ];
    const routes = new Map<string, string[]>([[ROUTES.sign.path, fixed]]);
    if (opts.v1)
      routes.set(ROUTES.v1Sign.path, [...fixed, ...Object.entries(v1DeprecationHeaders(ROUTES.sign.path)).flat()]);
    return (req: IncomingMessage, res: ServerResponse): boolean => {
      // A browser's request (Origin) takes the table's way: its answer needs the CORS headers.
      if (limit.inFlight < limit.limit || req.method !== 'POST' || req.headers.origin !== undefined) return false;
      const route = req.url ?? '';
      const headers = routes.get(route);
      if (!headers) return false;
      const started = process.hrtime.bigint();
      const requestId = requestIdOf(req);
      const { status, body } = toErrorEnvelope(err, requestId);
      const text = JSON.stringify(body);
      counted.refused(err);
      res.writeHead(status, [...headers, 'X-Request-Id', requestId, 'Content-Length', String(Buffer.byteLength(text))]);
      res.end(text);
      opts.recorder.observe('POST', route, status, Number(process.hrtime.bigint() - started) / 1e9);
      return true;
    };
  };

  return {
    door,
    start: (req, res, next) => {
      const now = Date.now();
      const deadline = new Deadline(now - lag.ms + opts.deadlineMs, opts.deadlineMs);
      const state: SignState = { deadline, step: 'queue', expired: false };
      states.set(res, state);
      if (!deadline.allows(signerTime, now)) return refuse(res, deadlineRefusal('queue'));
      state.step = 'key';
      armTimer(req, res, state);
      res.once('close', () => clearTimeout(state.timer));
      next();
    },
    gate: (step) => (_req, res, next) => {
      if (!check(res, step)) return;
      if (step === 'body') states.get(res)!.bodyFrom = Date.now();
      next();
    },
    admit: (res) => {
      bodyRead(res);
      const deadline = check(res, 'signer');
      if (!deadline) return undefined;
      if (!limit.tryAcquire()) {
        refuse(res, overloadRefusal('in_flight'));
        return undefined;
      }
      return { deadline, release: limit.releaser() };
    },
    expired: (res) => states.get(res)?.expired ?? false,
    signerTime,
    limit,
  };
}
