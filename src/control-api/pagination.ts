/** @module List paging of the API (docs/API.md "Calls"): `limit` 1..500 (default 50) and an opaque cursor. */
import { Type, type TObject } from '@sinclair/typebox';
import type { TenantId } from '../common/ids.js';
import type { Page, PageAfter, PageRequest } from '../storage/index.js';
import { defineRoute, type AnyRoute } from './route.js';
import { problems } from './problem.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Opaque cursor from `next_cursor` of the previous page.' })),
};

export const pageEnvelope = <T extends TObject>(item: T) =>
  Type.Object({ data: Type.Array(item), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export function encodeCursor(after: PageAfter): string {
  return Buffer.from(JSON.stringify([after.createdAt, after.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): PageAfter | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { createdAt: value[0], id: value[1] };
    }
  } catch {
    // fall through to the 400 below
  }
  throw problems.validation([{ path: '/query/cursor', message: 'is not a cursor this API issued' }]);
}

/** The list envelope: `{data, has_more, next_cursor}`. */
export function envelope<T>(items: T[], next: PageAfter | null): { data: T[]; has_more: boolean; next_cursor: string | null } {
  return { data: items, has_more: next !== null, next_cursor: next ? encodeCursor(next) : null };
}

/** What a tenant-scoped list endpoint needs: its identity, its item schema, the query and a presenter. */
export interface ListRouteSpec<R, P> {
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  item: TObject;
  list(tenantId: TenantId, page: PageRequest): Promise<Page<R>>;
  present(record: R): P;
}

/** A `GET` list endpoint paged like every other list of the API (limit, cursor, newest first). */
export function listRoute<R, P>(spec: ListRouteSpec<R, P>): AnyRoute {
  return defineRoute({
    method: 'GET', path: spec.path, operationId: spec.operationId, tags: [spec.tag], auth: 'tenant', summary: spec.summary,
    query: Type.Object(PageQuery, { additionalProperties: false }),
    responses: { 200: { description: `A page of ${spec.tag}, newest first.`, schema: pageEnvelope(spec.item) } },
    async handle({ query, principal }) {
      const page = await spec.list(principal.tenantId, { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) });
      return { status: 200, body: envelope(page.items.map((item) => spec.present(item)), page.next) };
    },
  });
}
