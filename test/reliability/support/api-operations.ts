/**
 * @module Every operation of the served OpenAPI document, and the RFC 9457 checks every error
 * answer must pass (problem+json, `status` equal to the HTTP status, a documented `code`).
 */
import { readFileSync } from 'node:fs';
import type { HttpAnswer } from './api-http.js';

export type JsonSchema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** OpenAPI path template, `/v1/calls/{id}`. */
  path: string;
  operationId: string;
  /** False for the endpoints that take no credentials (empty `security`). */
  secured: boolean;
  parameters: Parameter[];
  /** The JSON request body schema with `$ref`s resolved, when the operation takes a body. */
  body: JsonSchema | undefined;
  bodyRequired: boolean;
  /** The lowest 2xx status the document lists for the operation. */
  successStatus: number;
}

type Json = Record<string, unknown>;

function resolveRefs(node: unknown, components: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => resolveRefs(n, components));
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as Json).$ref;
  if (typeof ref === 'string') return resolveRefs(components[ref.replace('#/components/schemas/', '')], components);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolveRefs(v, components)]));
}

/** The operations of an OpenAPI 3.1 document, in document order. */
export function operationsOf(document: Json): Operation[] {
  const components = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as Json;
      const requestBody = op.requestBody as { required?: boolean; content?: Record<string, { schema?: unknown }> } | undefined;
      const bodySchema = requestBody?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(), path, operationId: String(op.operationId),
        secured: Array.isArray(op.security) && op.security.length > 0,
        parameters: resolveRefs(op.parameters ?? [], components) as Parameter[],
        body: bodySchema === undefined ? undefined : resolveRefs(bodySchema, components) as JsonSchema,
        bodyRequired: requestBody?.required === true,
        successStatus: Math.min(...Object.keys(op.responses as Json).map(Number).filter((n) => n >= 200 && n < 300)),
      });
    }
  }
  return out;
}

/** Every `code` docs/API.md documents, read from its error table (`| status | code | when |`). */
export function documentedCodes(apiDoc = new URL('../../../docs/API.md', import.meta.url)): Set<string> {
  const codes = new Set<string>();
  for (const line of readFileSync(apiDoc, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (!/^[45]\d\d$/.test(cells[1] ?? '')) continue;
    for (const m of (cells[2] ?? '').matchAll(/`([a-z_]+)`/g)) codes.add(m[1]!);
  }
  return codes;
}

/**
 * What is wrong with an answer under the error contract (empty when nothing): never a 5xx, and
 * a 4xx is problem+json whose `status` is the HTTP status and whose `code` is documented.
 */
export function problemFaults(answer: HttpAnswer, codes: ReadonlySet<string>): string[] {
  const faults: string[] = [];
  if (answer.status >= 500) faults.push(`a ${answer.status}`);
  if (answer.status < 400) return faults;
  const type = String(answer.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) faults.push(`content-type ${type || '(none)'}`);
  const body = answer.json as Json | undefined;
  if (typeof body !== 'object' || body === null) return [...faults, `body is not JSON: ${answer.text.slice(0, 80)}`];
  if (typeof body.type !== 'string') faults.push('no type');
  if (typeof body.title !== 'string') faults.push('no title');
  if (body.status !== answer.status) faults.push(`status ${String(body.status)} in the body`);
  if (typeof body.code !== 'string' || !codes.has(body.code)) faults.push(`undocumented code ${String(body.code)}`);
  return faults;
}
