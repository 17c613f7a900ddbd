/**
 * @module One JSON Schema validator (Ajv, draft 2020-12) for TypeBox schemas. Config and the
 * control API both validate through it, and the same schemas become the OpenAPI document.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** One validation failure, addressed by a JSON Pointer into the validated value. */
export interface SchemaIssue {
  path: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

export interface ValidatorOptions {
  /** Fill in schema defaults (config does; request bodies do not, so PUT can tell omission). */
  useDefaults?: boolean;
  /** Convert query-string scalars ("50" → 50, "true" → true). */
  coerceTypes?: boolean;
}

function makeAjv(options: ValidatorOptions): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    useDefaults: options.useDefaults ?? false,
    coerceTypes: options.coerceTypes ?? false,
  });
  return addFormats(ajv);
}

const ajvCache = new Map<string, Ajv2020>();
function ajvFor(options: ValidatorOptions): Ajv2020 {
  const key = `${options.useDefaults ? 1 : 0}${options.coerceTypes ? 1 : 0}`;
  let ajv = ajvCache.get(key);
  if (!ajv) {
    ajv = makeAjv(options);
    ajvCache.set(key, ajv);
  }
  return ajv;
}

/** Turns Ajv errors into path + message pairs a tenant can act on. */
export function describeErrors(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const e of errors ?? []) {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      path = `${path}/${extra}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      path = `${path}/${String((e.params as { missingProperty: string }).missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      message = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    if (!issues.some((i) => i.path === path && i.message === message)) issues.push({ path, message });
  }
  // anyOf/oneOf branches repeat themselves; the first few issues are what a reader needs.
  return issues.slice(0, 20);
}

/** A compiled validator for one schema. Compile once, at module load or start-up. */
export function compileValidator<S extends TSchema>(
  schema: S,
  options: ValidatorOptions = {},
): (value: unknown) => ValidationResult<Static<S>> {
  const validate: ValidateFunction = ajvFor(options).compile(schema);
  return (value) => (validate(value) ? { ok: true, value: value as Static<S> } : { ok: false, issues: describeErrors(validate.errors) });
}

/**
 * A string enum as a plain JSON Schema `enum` (one clear error, "must be one of ..."), typed as
 * the union of its values. TypeBox's literal unions would produce anyOf noise in errors and docs.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
