/**
 * The JSON schema validators of the request parsers (sign-request.ts, fills-query.ts), compiled
 * by one ajv instance whose INVARIANT is: no allErrors (stop at the first error), no coercion, no
 * removal of unknown fields, no defaults. A validator only ever answers yes or no about the value
 * as sent; the parsers give the reasons.
 */
import Ajv, { type ValidateFunction } from 'ajv';

const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
});

/** One validator per property of `properties`, for the names given. */
export function propertyValidators<N extends string>(
  properties: Readonly<Record<N, object>>,
  names: readonly N[],
): Record<N, ValidateFunction> {
  return Object.fromEntries(names.map((name) => [name, ajv.compile(properties[name])])) as Record<N, ValidateFunction>;
}
