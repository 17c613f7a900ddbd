/** @module SipHeaders: the ordered header fields of one SIP message, looked up case-insensitively. */
import { splitOutside } from '../grammar/lexical.js';
import { SipParseError } from '../grammar/parse-error.js';
import { canonicalName, headerKey, isListHeader } from './header-names.js';

interface Field {
  /** Name as written on the wire (canonical spelling for known headers). */
  name: string;
  /** Lower-cased long name, the comparison key. */
  key: string;
  value: string;
}

/**
 * Header fields in received order. Names compare case-insensitively and compact forms equal their
 * long names (RFC 3261 7.3.1, 7.3.3). Values are kept as raw text and parsed on demand by the
 * message getters, so a proxy-like path never pays for headers it does not read.
 */
export class SipHeaders {
  #fields: Field[] = [];

  /** Adds a field without name normalization checks; used by the parser. @internal */
  static fromRaw(fields: readonly (readonly [string, string])[]): SipHeaders {
    const h = new SipHeaders();
    for (const [name, value] of fields) h.append(name, value);
    return h;
  }

  /** The first field's value, or undefined. */
  get(name: string): string | undefined {
    const key = headerKey(name);
    for (const f of this.#fields) if (f.key === key) return f.value;
    return undefined;
  }

  /**
   * Every value: one per field, and for list headers (Via, Route, Contact, Allow...) one per
   * comma-separated element, commas inside quotes and `< >` respected.
   */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const out: string[] = [];
    const list = isListHeader(key);
    for (const f of this.#fields) {
      if (f.key !== key) continue;
      if (!list) {
        out.push(f.value);
        continue;
      }
      for (const v of splitListLenient(f.value)) if (v.length > 0) out.push(v);
    }
    return out;
  }

  /** The raw value of every field of this name, lists not split. */
  getAllFields(name: string): string[] {
    const key = headerKey(name);
    const out: string[] = [];
    for (const f of this.#fields) if (f.key === key) out.push(f.value);
    return out;
  }

  /** How many fields (not list elements) carry this name. */
  count(name: string): number {
    const key = headerKey(name);
    let n = 0;
    for (const f of this.#fields) if (f.key === key) n++;
    return n;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Replaces every field of this name with one field, kept at the position of the first. */
  set(name: string, value: string): this {
    const key = headerKey(name);
    const at = this.#fields.findIndex((f) => f.key === key);
    if (at < 0) return this.append(name, value);
    this.#fields[at] = { name: canonicalName(name, key), key, value };
    this.#fields = this.#fields.filter((f, i) => i <= at || f.key !== key);
    return this;
  }

  append(name: string, value: string): this {
    const key = headerKey(name);
    this.#fields.push({ name: canonicalName(name, key), key, value });
    return this;
  }

  /** Inserts before the first field of the same name (a new top Via or Route), or at the top. */
  prepend(name: string, value: string): this {
    const key = headerKey(name);
    const at = this.#fields.findIndex((f) => f.key === key);
    this.#fields.splice(at < 0 ? 0 : at, 0, { name: canonicalName(name, key), key, value });
    return this;
  }

  /** Removes every field of this name; true when one was present. */
  delete(name: string): boolean {
    const key = headerKey(name);
    const before = this.#fields.length;
    this.#fields = this.#fields.filter((f) => f.key !== key);
    return this.#fields.length !== before;
  }

  /**
   * Removes the first element of a list header (the top Via of a response being forwarded
   * upstream, RFC 3261 18.1.2) whether it shares its field with others or not.
   */
  removeFirstValue(name: string): string | undefined {
    const key = headerKey(name);
    const at = this.#fields.findIndex((f) => f.key === key);
    if (at < 0) return undefined;
    const field = this.#fields[at]!;
    const values = splitList(field.value);
    const first = values.shift();
    if (values.length === 0) this.#fields.splice(at, 1);
    else field.value = values.join(', ');
    return first;
  }

  /**
   * Replaces the first element of a list header (stamping `received` on the top Via, RFC 3261
   * 18.2.1), keeping the other elements of its field; false when the header is absent.
   */
  replaceFirstValue(name: string, value: string): boolean {
    const key = headerKey(name);
    const field = this.#fields.find((f) => f.key === key);
    if (!field) return false;
    const values = splitList(field.value);
    values[0] = value;
    field.value = values.join(', ');
    return true;
  }

  /** [name, value] pairs in order, names in wire spelling. */
  *entries(): IterableIterator<[string, string]> {
    for (const f of this.#fields) yield [f.name, f.value];
  }

  get size(): number {
    return this.#fields.length;
  }

  clone(): SipHeaders {
    const h = new SipHeaders();
    h.#fields = this.#fields.map((f) => ({ ...f }));
    return h;
  }
}

/**
 * Elements for reading: a value with an unbalanced quote is one element, so `getAll` never
 * throws on headers that validation did not look at (Require, Supported, Allow...).
 */
function splitListLenient(value: string): string[] {
  try {
    return splitList(value);
  } catch {
    return [value];
  }
}

/** Comma-separated elements of a list header value; an unbalanced quote is a parse error. */
export function splitList(value: string): string[] {
  if (value.indexOf(',') < 0) return [value];
  try {
    return splitOutside(value, 0x2c);
  } catch (err) {
    throw new SipParseError('unbalanced quotes in header list', 400, { cause: err });
  }
}
