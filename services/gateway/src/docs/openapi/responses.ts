/**
 * The OpenAPI responses of an operation, built from the answers it can give. An answer is one
 * error code with the headers it carries; answers are grouped by the code's HTTP status
 * (ERROR_STATUS, the table the error renderer uses), so a status documents exactly the codes
 * the route can send (`anyOf` one schema per code: Redocly cannot tell that nested `const`s exclude each other, so not `oneOf`). Headers, error schemas and shared
 * responses are `$ref`s to components, collected while building: a component exists only when
 * something refers to it (Redocly's no-unused-components).
 */
import { ERROR_STATUS, errorEnvelopeSchema, REQUEST_ID_PATTERN, type ErrorCode } from '@pmm/protocol';

type Json = Record<string, unknown>;

export type HeaderName =
  | 'X-Request-Id'
  | 'RateLimit-Limit'
  | 'RateLimit-Remaining'
  | 'RateLimit-Reset'
  | 'Retry-After'
  | 'Deprecation'
  | 'Link'
  | 'Allow'
  | 'Connection';

/** A header a response declares, and whether every response of that kind carries it. */
export interface HeaderUse {
  name: HeaderName;
  required: boolean;
}

/** One way a route answers with an error. */
export interface Answer {
  code: ErrorCode;
  description: string;
  headers: HeaderUse[];
  /** Example name → the `message` of that example. */
  examples: Record<string, string>;
  /** Set on answers every route shares: the name under components.responses. */
  shared?: string;
}

export const EXAMPLE_REQUEST_ID = '6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

const HEADERS: Record<HeaderName, Json> = {
  'X-Request-Id': {
    description: "Request identifier, also in `error.requestId` and in the service's logs.",
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN },
    example: EXAMPLE_REQUEST_ID,
  },
  'RateLimit-Limit': {
    description: 'Requests allowed per window for your integrator.',
    schema: { type: 'integer', minimum: 1 },
    example: 600,
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window (approximate when several gateway instances share your budget).',
    schema: { type: 'integer', minimum: 0 },
    example: 599,
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends.',
    schema: { type: 'integer', minimum: 1 },
    example: 17,
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
    example: 17,
  },
  Deprecation: { description: 'Always `true` on /v1 responses.', schema: { type: 'string', const: 'true' } },
  Link: {
    description: 'The successor of the /v1 route, e.g. `</v2/price>; rel="successor-version"`.',
    schema: { type: 'string' },
    example: '</v2/price>; rel="successor-version"',
  },
  Allow: { description: 'Methods the path accepts.', schema: { type: 'string' }, example: 'GET, HEAD' },
  Connection: {
    description: 'The connection is closed after this answer.',
    schema: { type: 'string', const: 'close' },
  },
};

const required = (...names: HeaderName[]): HeaderUse[] => names.map((name) => ({ name, required: true }));
const optional = (...names: HeaderName[]): HeaderUse[] => names.map((name) => ({ name, required: false }));
const RATE_LIMIT: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/** Headers by the stage that answers (docs/decisions/0001-error-precedence.md). */
export const STAGE_HEADERS = {
  /** Node's HTTP parser or the request timeout, before routing: the connection is closed. */
  beforeRouting: required('X-Request-Id', 'Connection'),
  /** Routing (404, 405) and the key check (401): before the rate limiter. */
  beforeLimiter: required('X-Request-Id'),
  /** The limiter refused. */
  limited: required('X-Request-Id', ...RATE_LIMIT, 'Retry-After'),
  /** The route itself, after the limiter counted the request. */
  route: required('X-Request-Id', ...RATE_LIMIT),
  /** A failure that may come before or after the limiter (key store down, timeout, bug). */
  failure: [...required('X-Request-Id'), ...optional(...RATE_LIMIT)],
  /** 503: as failure, with `Retry-After` (every 503 is an ApiError, which sets it). */
  unavailable: [...required('X-Request-Id', 'Retry-After'), ...optional(...RATE_LIMIT)],
} as const satisfies Record<string, HeaderUse[]>;

/** `NOT_FOUND` → `NotFoundError`, `INTERNAL_ERROR` → `InternalError`: a code's envelope schema. */
export function errorSchemaName(code: ErrorCode): string {
  const name = code
    .toLowerCase()
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  return name.endsWith('Error') ? name : `${name}Error`;
}

/** Components referred to while building; `components()` gives the ones in use. */
export class ComponentSet {
  private readonly headers = new Map<string, Json>();
  private readonly responses = new Map<string, Json>();
  private readonly errors = new Set<ErrorCode>();

  header(use: HeaderUse): Json {
    // One component per header and requiredness: `required` cannot be set beside a `$ref`.
    const key = use.required ? use.name : `${use.name}.optional`;
    this.headers.set(key, { ...HEADERS[use.name], required: use.required });
    return { $ref: `#/components/headers/${key}` };
  }

  errorSchema(code: ErrorCode): Json {
    this.errors.add(code);
    return { $ref: `#/components/schemas/${errorSchemaName(code)}` };
  }

  /** The responses of one status: a `$ref` to a shared response, or the answers merged. */
  response(answers: Answer[], description?: string): Json {
    const first = answers[0]!;
    if (answers.length === 1 && first.shared) {
      if (!this.responses.has(first.shared)) this.responses.set(first.shared, this.merge(answers));
      const ref = { $ref: `#/components/responses/${first.shared}` };
      // OpenAPI 3.1 lets a reference replace the description of what it points to.
      return description ? { ...ref, description } : ref;
    }
    const merged = this.merge(answers);
    return description ? { ...merged, description } : merged;
  }

  private merge(answers: Answer[]): Json {
    const description =
      answers.length === 1
        ? answers[0]!.description
        : answers.map((a) => `- \`${a.code}\`: ${a.description}`).join('\n');
    // A header is required only when every answer of this status carries it.
    const headers: Json = {};
    const names = [...new Set(answers.flatMap((a) => a.headers.map((h) => h.name)))];
    for (const name of names) {
      const always = answers.every((a) => a.headers.some((h) => h.name === name && h.required));
      headers[name] = this.header({ name, required: always });
    }
    const codes = [...new Set(answers.map((a) => a.code))];
    const schema = codes.length === 1 ? this.errorSchema(codes[0]!) : { anyOf: codes.map((c) => this.errorSchema(c)) };
    const examples: Json = {};
    for (const answer of answers) {
      for (const [name, message] of Object.entries(answer.examples)) {
        examples[name] = { value: { error: { code: answer.code, message, requestId: EXAMPLE_REQUEST_ID } } };
      }
    }
    return { description, headers, content: { 'application/json': { schema, examples } } };
  }

  /** Groups answers by status (ascending) into an operation's error responses; `descriptions` replace a status's own. */
  errorResponses(answers: Answer[], descriptions: Partial<Record<number, string>> = {}): Record<string, Json> {
    const byStatus = new Map<number, Answer[]>();
    for (const answer of answers) {
      const status = ERROR_STATUS[answer.code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), answer]);
    }
    return Object.fromEntries(
      [...byStatus.entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, group]) => [String(status), this.response(group, descriptions[status])]),
    );
  }

  components(): { headers: Json; responses: Json; errorSchemas: Json } {
    const sorted = <T>(entries: [string, T][]) => Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
    return {
      headers: sorted([...this.headers.entries()]),
      responses: sorted([...this.responses.entries()]),
      errorSchemas: sorted([...this.errors].map((code) => [errorSchemaName(code), errorEnvelopeSchema([code])])),
    };
  }
}
