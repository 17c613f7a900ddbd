/**
 * @module Rewrites the SQLite placeholders the repositories use (`@name`, `?`) to PostgreSQL's
 * `$n`, outside quoted strings and identifiers, and binds parameters in that order.
 */
import type { SqlParams } from './sql-database.js';

export interface CompiledStatement {
  text: string;
  bind(params: SqlParams | undefined): unknown[];
}

/** Scans `sql` once: `@name` (the same name is one `$n`) or `?` (one `$n` each), never both. */
export function translatePlaceholders(sql: string): CompiledStatement {
  const names: string[] = [];
  let positional = 0;
  let text = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      text += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') {
      positional += 1;
      text += `$${positional}`;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const name = /^[A-Za-z_]\w*/.exec(sql.slice(i + 1))![0];
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      text += `$${index + 1}`;
      i += name.length;
    } else {
      text += c;
    }
  }
  if (positional > 0 && names.length > 0) throw new Error('a statement mixes @name and ? placeholders');
  return {
    text,
    bind: (params) => {
      if (params === undefined) return [];
      if (Array.isArray(params)) return params as unknown[];
      const byName = params as Readonly<Record<string, unknown>>;
      return names.map((name) => {
        const value = byName[name];
        if (value === undefined) throw new Error(`missing SQL parameter @${name}`);
        return value;
      });
    },
  };
}
