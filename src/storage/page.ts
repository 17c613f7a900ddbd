/** @module Keyset pagination shared by every list: newest first by (created_at, id). */

/** Where the previous page stopped (decoded from the API's opaque cursor). */
export interface PageAfter {
  createdAt: string;
  id: string;
}

export interface PageRequest {
  limit: number;
  after?: PageAfter | undefined;
}

export interface Page<T> {
  items: T[];
  /** The last item's position, when more items follow. */
  next: PageAfter | null;
}

/**
 * SQL for "rows strictly after the cursor in (created_at DESC, id DESC) order", with named
 * parameters @after_created_at and @after_id (both null for the first page). Keyset paging stays
 * stable under concurrent inserts: new rows sort before the cursor and never shift a page.
 * The CAST gives PostgreSQL the parameter's type where it is only tested for NULL: it cannot
 * infer one there ("could not determine data type of parameter"); SQLite reads it the same way.
 */
export const KEYSET_SQL =
  '(CAST(@after_created_at AS TEXT) IS NULL OR created_at < @after_created_at OR (created_at = @after_created_at AND id < @after_id))';

export function keysetParams(after: PageAfter | undefined): { after_created_at: string | null; after_id: string | null } {
  return { after_created_at: after?.createdAt ?? null, after_id: after?.id ?? null };
}

/** Turns `limit + 1` fetched rows into a page. */
export function toPage<T extends { id: string; created_at: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? { createdAt: last.created_at, id: last.id } : null };
}
