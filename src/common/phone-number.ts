/** @module Phone numbers in E.164 (docs/API.md "Requests and responses"). */

export const E164_PATTERN = '^\\+[1-9][0-9]{1,14}$';
const E164 = new RegExp(E164_PATTERN);

export const isE164 = (value: string): boolean => E164.test(value);
