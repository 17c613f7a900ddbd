/** @module A paged inventory list read with the API's cursor, newest first, with "load more". */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { messageOf } from '../components.js';

interface Page<T> { data: T[]; has_more: boolean; next_cursor: string | null }

export function useList<T>(path: string) {
  const [items, setItems] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async (cursor?: string) => {
    try {
      const page = await api<Page<T>>('GET', `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      setItems((list) => (cursor ? [...(list ?? []), ...page.data] : page.data));
      setNext(page.next_cursor);
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  }, [path]);
  useEffect(() => { void load(); }, [load]);
  return { items, error, setError, reload: () => load(), more: next ? () => load(next) : null };
}
