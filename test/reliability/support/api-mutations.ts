/**
 * @module fast-check arbitraries of hostile requests for one OpenAPI operation: a valid request
 * (from its schemas) with one thing broken: a field's JSON type, a required field dropped, an
 * unknown field, huge or unicode strings, bad `limit` and `cursor`, malformed JSON, the wrong
 * Content-Type or encoding, a path id of the wrong shape, a body where none is taken.
 */
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { compileValidator } from '../../../src/common/schema.js';
import type { HttpRequest } from './api-http.js';
import type { JsonSchema, Operation } from './api-operations.js';

/** One hostile request and whether the API must refuse it (a 4xx, never a 2xx). */
export interface BadCase {
  kind: string;
  request: HttpRequest;
  mustReject: boolean;
}

export interface MutationContext {
  /** The path with real ids of the tenant filled in. */
  path: string;
  headers: Record<string, string>;
  /** The operation's body size limit in bytes. */
  bodyLimit: number;
  /** A cursor the API issued for a list, to tamper with. */
  realCursor: string;
}

type Json = unknown;

/** Percent-encodes the UTF-8 bytes of `s` (encodeURIComponent throws on lone surrogates). */
function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[\w.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}
type Obj = Record<string, Json>;

const NASTY = ['\u0000', '\ud800', '\udfff', '\u202e', '\ufeff', '\u0301', '\u{1f4de}', '\u{10ffff}', '\\', '"', '\n', "'; DROP TABLE calls; --", '%00', '../..'];
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(fc.constantFrom(...NASTY), { minLength: 1, maxLength: 8 }).map((parts) => parts.join('')),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `\u202b${s}\u202c`),
);
const anyJson = fc.oneof(
  fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), nastyString,
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

const propertiesOf = (s: JsonSchema): Record<string, JsonSchema> => (s.properties ?? {}) as Record<string, JsonSchema>;
const requiredOf = (s: JsonSchema): string[] => (s.required ?? []) as string[];

/** A value the schema accepts (for the simple schemas this API declares). */
export function validValue(s: JsonSchema): fc.Arbitrary<Json> {
  if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as JsonSchema[]).map(validValue));
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as Json[]));
  if (Array.isArray(s.examples) && s.examples.length > 0) return fc.constantFrom(...(s.examples as Json[]));
  switch (s.type) {
    case 'object': {
      const props = propertiesOf(s);
      const required = new Set(requiredOf(s));
      const record = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validValue(v)]));
      return fc.record(record, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
    }
    case 'string': {
      const min = Number(s.minLength ?? 0);
      const max = Math.min(Number(s.maxLength ?? 40), 60);
      if (typeof s.pattern === 'string') {
        return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= Number(s.maxLength ?? Infinity));
      }
      return fc.string({ minLength: Math.max(1, min), maxLength: Math.max(min, max) });
    }
    case 'integer': return fc.integer({ min: Number(s.minimum ?? -1000), max: Number(s.maximum ?? 1000) });
    case 'number': return fc.double({ min: Number(s.minimum ?? -1000), max: Number(s.maximum ?? 1000), noNaN: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Body mutations: each keeps the rest of a valid body and breaks one thing. */
function bodyMutations(body: JsonSchema, limit: number): fc.Arbitrary<{ kind: string; value: Json }>[] {
  const props = Object.keys(propertiesOf(body));
  const base = validValue(body).map((v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : {}));
  const field = props.length > 0 ? fc.constantFrom(...props) : fc.constant('unknown_field');
  const huge = fc.constantFrom(201, 4096, limit - 200, limit + 1, 2 * limit);
  return [
    fc.tuple(base, field, anyJson).map(([b, k, v]) => ({ kind: 'wrong type', value: { ...b, [k]: v } })),
    fc.tuple(base, fc.constantFrom(...(requiredOf(body).length > 0 ? requiredOf(body) : ['-'])))
      .map(([b, k]) => ({ kind: 'missing required', value: Object.fromEntries(Object.entries(b).filter(([n]) => n !== k)) })),
    fc.tuple(base, fc.string({ minLength: 1, maxLength: 30 }).filter((k) => !props.includes(k)), anyJson)
      .map(([b, k, v]) => ({ kind: 'extra field', value: { ...b, [k]: v } })),
    fc.tuple(base, field, huge, fc.constantFrom('x', '\u{1f4de}', '\u05d0'))
      .map(([b, k, n, ch]) => ({ kind: `huge string ${n}`, value: { ...b, [k]: ch.repeat(Math.ceil(n / ch.length)) } })),
    fc.tuple(base, field, nastyString).map(([b, k, s]) => ({ kind: 'unicode string', value: { ...b, [k]: s } })),
    fc.oneof(fc.array(anyJson, { maxLength: 3 }), fc.integer(), fc.constant(null), nastyString, fc.boolean())
      .map((v) => ({ kind: 'top-level type', value: v })),
  ];
}

function deep(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** Raw bodies that are not JSON at all, or JSON cut short. */
const malformedJson = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).filter((s) => { try { JSON.parse(s); return false; } catch { return true; } }),
  fc.constantFrom('{', '{"a":1,}', '{"a":}', "{'a':1}", '{"a":1}}', 'nul', '\u0000', '{"a":"\\u12"}', '[1,2', '{"a":1}garbage'),
);

/**
 * Query values are coerced like Ajv's coerceTypes (` 5`, `0x10` and `1e2` read as numbers), so only
 * values that do not read as an integer from 1 to 500 must be refused.
 */
function limitCoerces(v: string): boolean {
  const n = Number(v);
  return v.trim() !== '' && Number.isInteger(n) && n >= 1 && n <= 500;
}

const badLimit = fc.oneof(
  fc.constantFrom('-1', '0', '501', '1.5', '1e3', 'abc', '', '99999999999999999999', '0x10', ' 5', 'NaN', 'Infinity', '-0.0', '5%00'),
  fc.integer({ min: 501 }).map(String), fc.integer({ max: 0 }).map(String), fc.double({ noNaN: true }).filter((d) => !Number.isInteger(d)).map(String),
);

/**
 * Cursors are keyset positions, `[created_at, id]` in base64url JSON, and are not signed: one that
 * decodes to that shape is a position like any other, so only other shapes must be refused.
 */
function cursorShaped(v: string): boolean {
  try {
    const value: unknown = JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
    return v.length <= 200 && Array.isArray(value) && value.length === 2 && value.every((x) => typeof x === 'string');
  } catch {
    return false;
  }
}

function badCursor(real: string): fc.Arbitrary<string> {
  const b64 = (v: Json): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const decoded = JSON.parse(Buffer.from(real, 'base64url').toString('utf8')) as Obj;
  return fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.string({ minLength: 201, maxLength: 400 }),
    fc.jsonValue({ maxDepth: 2 }).map(b64),
    fc.tuple(fc.constantFrom(...Object.keys(decoded)), anyJson).map(([k, v]) => b64({ ...decoded, [k]: v })),
    fc.nat({ max: real.length - 1 }).map((i) => `${real.slice(0, i)}${real[i] === 'A' ? 'B' : 'A'}${real.slice(i + 1)}`),
    fc.constant(`${real}${real}`), fc.constant(real.slice(0, -3)),
  );
}

const badId = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(pct),
  fc.string({ minLength: 65, maxLength: 3000 }).map(pct),
  fc.constantFrom('%E0%A4%A', '%', '%zz', '%00', '..', '%2e%2e', '%2F', 'agt_%00', 'call_', 'rte_' + 'x'.repeat(60), '0', '-1', 'null', '%F0%9F%93%9E'),
  fc.constantFrom('agt_', 'rte_', 'sipc_', 'call_', 'ten_', 'num_').chain((p) => fc.string({ minLength: 1, maxLength: 20 }).map((s) => p + pct(s))),
);

const wrongContentType = fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'text/json', 'image/png');

/** All the hostile requests for `op`, as one arbitrary. */
export function badRequests(op: Operation, ctx: MutationContext): fc.Arbitrary<BadCase> {
  const json = { ...ctx.headers, 'content-type': 'application/json' };
  const at = (path: string, query = ''): string => `${path}${query ? `?${query}` : ''}`;
  const checkBody = op.body ? compileValidator(op.body as unknown as TSchema) : undefined;
  const cases: fc.Arbitrary<BadCase>[] = [
    fc.tuple(fc.string({ minLength: 1, maxLength: 20 }), nastyString).map(([k, v]) => ({
      kind: 'unknown query parameter', mustReject: !op.parameters.some((p) => p.name === k),
      request: { method: op.method, path: at(ctx.path, `${pct(k)}=${pct(v)}`), headers: ctx.headers },
    })),
    fc.tuple(fc.constantFrom('x'.repeat(300), 'a b', '\t', 'ä', '\u{1f4de}', ''), fc.constantFrom('x-request-id', 'idempotency-key')).map(([v, name]) => ({
      kind: `odd ${name}`, mustReject: false,
      request: { method: op.method, path: ctx.path, headers: { ...ctx.headers, [name]: Buffer.from(v, 'utf8').toString('latin1') } },
    })),
  ];
  if (op.parameters.some((p) => p.name === 'limit')) {
    cases.push(badLimit.map((v) => ({ kind: 'bad limit', mustReject: !limitCoerces(v), request: { method: op.method, path: at(ctx.path, `limit=${pct(v)}`), headers: ctx.headers } })));
    cases.push(fc.constant({ kind: 'repeated limit', mustReject: true, request: { method: op.method, path: at(ctx.path, 'limit=1&limit=2'), headers: ctx.headers } }));
  }
  if (op.parameters.some((p) => p.name === 'cursor')) {
    cases.push(badCursor(ctx.realCursor).map((v) => ({ kind: 'bad cursor', mustReject: !cursorShaped(v), request: { method: op.method, path: at(ctx.path, `cursor=${pct(v)}`), headers: ctx.headers } })));
  }
  for (const p of op.parameters.filter((q) => q.in === 'query' && Array.isArray(q.schema.enum))) {
    cases.push(nastyString.filter((v) => !(p.schema.enum as string[]).includes(v)).map((v) => ({
      kind: `bad ${p.name}`, mustReject: true, request: { method: op.method, path: at(ctx.path, `${p.name}=${pct(v)}`), headers: ctx.headers },
    })));
  }
  if (op.path.includes('{')) {
    cases.push(badId.map((id) => ({ kind: 'bad path id', mustReject: true, request: { method: op.method, path: op.path.replace(/\{\w+\}/, id).replace(/\{\w+\}/g, 'x'), headers: json, body: op.body ? '{}' : undefined } })));
  }
  if (!op.body) {
    cases.push(fc.jsonValue({ maxDepth: 2 }).map((v) => ({ kind: 'body where none is taken', mustReject: true, request: { method: op.method, path: ctx.path, headers: json, body: JSON.stringify(v) } })));
    return fc.oneof(...cases);
  }
  for (const m of bodyMutations(op.body, ctx.bodyLimit)) {
    cases.push(m.map(({ kind, value }) => ({
      kind, mustReject: !(checkBody?.(value).ok ?? true), request: { method: op.method, path: ctx.path, headers: json, body: JSON.stringify(value) },
    })));
  }
  const nested = deep(20_000);
  cases.push(
    fc.constant({ kind: 'deep nesting', mustReject: !(checkBody?.(JSON.parse(nested)).ok ?? true), request: { method: op.method, path: ctx.path, headers: json, body: nested } }),
    malformedJson.map((text) => ({ kind: 'malformed JSON', mustReject: true, request: { method: op.method, path: ctx.path, headers: json, body: text } })),
    fc.tuple(validValue(op.body), wrongContentType).map(([v, type]) => ({
      kind: `content-type ${type}`, mustReject: true, request: { method: op.method, path: ctx.path, headers: { ...ctx.headers, 'content-type': type }, body: JSON.stringify(v) },
    })),
    fc.constantFrom('gzip', 'deflate', 'br', 'compress', 'x-unknown').map((encoding) => ({
      kind: `content-encoding ${encoding}`, mustReject: true,
      request: { method: op.method, path: ctx.path, headers: { ...json, 'content-encoding': encoding }, body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]) },
    })),
  );
  return fc.oneof(...cases);
}
