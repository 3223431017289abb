/**
 * The query of `GET /v2/fills` (docs/api.md#get-v2fills--your-signatures-fates) and its validation, in the precedence
 * order of docs/decisions/0001-error-precedence.md: an unknown parameter is 400 UNSUPPORTED_FIELD
 * (naming it), then each parameter in the order chainId, from, to, cursor: missing (when
 * required), repeated or malformed is 422 VALIDATION_ERROR `<name>: <reason>`; then the period
 * itself (`to` after `from`, at most {@link FILLS_MAX_PERIOD_SECONDS} long) is 422 naming `to`.
 * Whether the chain is served and enabled for the key is the gateway's (400 UNSUPPORTED_CHAIN).
 *
 * The JSON schema below is the one source of the parameters' shapes: the validators are compiled
 * from it by ajv (strict-validator.ts, as for the sign body) and the OpenAPI document lists it.
 */
import { ApiError, validationError } from '../errors/api-error';
import { chainIdFromQuery } from './parse-chain-id';
import { propertyValidators } from './strict-validator';

/** The longest period one request may ask for: a day (page through longer ones day by day). */
export const FILLS_MAX_PERIOD_SECONDS = 86_400;

/** `from` and `to`: Unix seconds, at most 12 digits (up to the year 33658). */
const UNIX_SECONDS_PATTERN = '^[0-9]{1,12}$';
/** A page's cursor: an audit trail's stream entry id, `<ms>-<sequence>`. */
export const FILLS_CURSOR_PATTERN = '^[0-9]{1,16}-[0-9]{1,16}$';

export const FILLS_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    chainId: { type: 'string', pattern: '^[0-9]+$' },
    from: { type: 'string', pattern: UNIX_SECONDS_PATTERN },
    to: { type: 'string', pattern: UNIX_SECONDS_PATTERN },
    cursor: { type: 'string', pattern: FILLS_CURSOR_PATTERN },
  },
  required: ['from', 'to'],
} as const;

type ParameterName = keyof (typeof FILLS_QUERY_SCHEMA)['properties'];

export interface FillsQuery {
  /** Resolved (omitted or 0: 8453); not yet checked to be served. */
  chainId: number;
  /** Unix seconds, `from` inclusive, `to` exclusive. */
  from: number;
  to: number;
  /** The `next` of the page before; absent for the first page. */
  cursor?: string;
}

const PARAMETERS = Object.keys(FILLS_QUERY_SCHEMA.properties) as ParameterName[];
const REQUIRED: ReadonlySet<string> = new Set(FILLS_QUERY_SCHEMA.required);
/** The parameters the schema validates; chainId has its own parser (parse-chain-id.ts), of the same shape. */
type Checked = Exclude<ParameterName, 'chainId'>;

// Yes or no about the value as sent (strict-validator.ts).
const validate = propertyValidators<Checked>(FILLS_QUERY_SCHEMA.properties);

const REASONS: Record<Checked, string> = {
  from: 'must be Unix seconds (ASCII digits only, at most 12)',
  to: 'must be Unix seconds (ASCII digits only, at most 12)',
  cursor: 'must be the `next` of an earlier page (`<digits>-<digits>`)',
};

/**
 * Validates a parsed query string (node:querystring's shape: a repeated parameter is an array).
 * @throws ApiError UNSUPPORTED_FIELD or VALIDATION_ERROR (see the module comment)
 */
export function parseFillsQuery(query: Record<string, unknown>): FillsQuery {
  for (const name of Object.keys(query)) {
    if (!Object.hasOwn(FILLS_QUERY_SCHEMA.properties, name)) {
      const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
      throw new ApiError(
        'UNSUPPORTED_FIELD',
        `${shown}: unsupported query parameter (defined: ${PARAMETERS.join(', ')})`,
      );
    }
  }
  const value = (name: Checked): string | undefined => {
    const raw = query[name];
    if (raw === undefined) {
      if (REQUIRED.has(name)) throw validationError(name, 'is required');
      return undefined;
    }
    if (Array.isArray(raw)) throw validationError(name, 'must be given at most once');
    if (!validate(name)(raw)) throw validationError(name, REASONS[name]);
    return raw as string;
  };
  // chainId's own rules (docs/decisions/0003-chainid.md), as on /v2/price; its schema is the same shape.
  const chainId = chainIdFromQuery(query.chainId);
  const from = Number(value('from'));
  const to = Number(value('to'));
  const cursor = value('cursor');
  if (to <= from) throw validationError('to', 'must be after from');
  if (to - from > FILLS_MAX_PERIOD_SECONDS)
    throw validationError('to', `must be at most ${FILLS_MAX_PERIOD_SECONDS} s (a day) after from`);
  return { chainId, from, to, ...(cursor !== undefined ? { cursor } : {}) };
}
