/**
 * The JSON schema validators of the request parsers (sign-request.ts, fills-query.ts), compiled
 * by one ajv instance whose INVARIANT is: no allErrors (stop at the first error), no coercion, no
 * removal of unknown fields, no defaults. A validator only ever answers yes or no about the value
 * as sent; the parsers give the reasons.
 *
 * Each validator is compiled the first time it is asked for, and ajv itself created then: every
 * process and every test file that loads the protocol (most of them, through @pmm/core's index)
 * would otherwise pay ajv's load and these compilations, about 0.13 CPU s, whether it parses a
 * request or not.
 */
import Ajv, { type ValidateFunction } from 'ajv';

let ajv: Ajv | undefined;

/** The validator of each property of `properties`, compiled the first time it is asked for. */
export function propertyValidators<N extends string>(
  properties: Readonly<Record<N, object>>,
): (name: N) => ValidateFunction {
  const compiled = new Map<N, ValidateFunction>();
  return (name) => {
    let validator = compiled.get(name);
    if (!validator) {
      ajv ??= new Ajv({
        allErrors: false,
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        strict: true,
      });
      validator = ajv.compile(properties[name]);
      compiled.set(name, validator);
    }
    return validator;
  };
}
