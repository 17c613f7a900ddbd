/** @module RFC 9457 problem details: the one error body of the API (docs/API.md "Errors"). */
import { STATUS_CODES } from 'node:http';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../common/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  request_id: string;
  errors?: { path: string; message: string }[];
  [extra: string]: unknown;
}

/** The problem schema, for the OpenAPI document. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'Always about:blank: `code` names the problem.' }),
    title: Type.String({ examples: ['Not Found'] }),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable machine-readable code, listed in docs/API.md.', examples: ['not_found'] }),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String({ description: 'JSON Pointer' }), message: Type.String() }))),
  },
  { $id: 'Problem', additionalProperties: true },
);

/** Generic wording for errors whose message must not be shown (every 5xx). */
const GENERIC_DETAIL: Record<number, string> = {
  500: 'The gateway could not complete the request.',
  502: 'An upstream provider or carrier did not answer usefully.',
  503: 'The gateway is unavailable; try again later.',
};

export function toProblem(err: ApiError, requestId: string): Problem {
  const problem: Problem = {
    ...err.extra,
    type: 'about:blank',
    title: STATUS_CODES[err.status] ?? 'Error',
    status: err.status,
    code: err.code,
    detail: err.expose ? err.message : (GENERIC_DETAIL[err.status] ?? 'The request failed.'),
    request_id: requestId,
  };
  if (err.errors) problem.errors = err.errors;
  return problem;
}

/** Shorthands for the errors every endpoint can raise. */
export const problems = {
  validation: (errors: { path: string; message: string }[], detail = 'The request is not valid.') =>
    new ApiError(400, 'validation_failed', detail, { errors }),
  notFound: (what = 'resource') => new ApiError(404, 'not_found', `No ${what} with that id.`),
  unauthorized: (detail = 'Missing or invalid credentials.') =>
    new ApiError(401, 'unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="voice-gateway"' } }),
};
