/** @module Header field names: compact forms, canonical spellings and which headers are comma lists. */

/** Compact forms (RFC 3261 7.3.3 and the RFCs that defined later ones) to lower-cased long names. */
export const COMPACT_FORMS: Readonly<Record<string, string>> = {
  a: 'accept-contact', // RFC 3841
  b: 'referred-by', // RFC 3892
  c: 'content-type',
  d: 'request-disposition', // RFC 3841
  e: 'content-encoding',
  f: 'from',
  i: 'call-id',
  j: 'reject-contact', // RFC 3841
  k: 'supported',
  l: 'content-length',
  m: 'contact',
  n: 'identity-info', // RFC 4474
  o: 'event', // RFC 6665
  r: 'refer-to', // RFC 3515
  s: 'subject',
  t: 'to',
  u: 'allow-events', // RFC 6665
  v: 'via',
  x: 'session-expires', // RFC 4028
  y: 'identity', // RFC 8224
};

/** Canonical spelling for serialization, by lower-cased name; unknown names keep their received spelling. */
const CANONICAL: Readonly<Record<string, string>> = Object.fromEntries(
  [
    'Accept', 'Accept-Contact', 'Accept-Encoding', 'Accept-Language', 'Alert-Info', 'Allow', 'Allow-Events',
    'Authentication-Info', 'Authorization', 'Call-ID', 'Call-Info', 'Contact', 'Content-Disposition',
    'Content-Encoding', 'Content-Language', 'Content-Length', 'Content-Type', 'CSeq', 'Date', 'Error-Info',
    'Event', 'Expires', 'From', 'Identity', 'Identity-Info', 'In-Reply-To', 'Max-Forwards', 'Min-Expires',
    'Min-SE', 'MIME-Version', 'Organization', 'P-Asserted-Identity', 'P-Preferred-Identity', 'Path', 'Priority',
    'Privacy', 'Proxy-Authenticate', 'Proxy-Authorization', 'Proxy-Require', 'RAck', 'Reason', 'Record-Route',
    'Refer-To', 'Referred-By', 'Reject-Contact', 'Replaces', 'Reply-To', 'Request-Disposition', 'Require',
    'Retry-After', 'Route', 'RSeq', 'Server', 'Service-Route', 'Session-Expires', 'SIP-ETag', 'SIP-If-Match',
    'Subject', 'Subscription-State', 'Supported', 'Timestamp', 'To', 'Unsupported', 'User-Agent', 'Via',
    'Warning', 'WWW-Authenticate',
  ].map((n) => [n.toLowerCase(), n]),
);

/**
 * Headers whose values are comma-separated lists (RFC 3261 7.3.1): several fields and one field
 * with commas mean the same. Authorization-style headers are not lists: their commas separate
 * parameters.
 */
const LIST_HEADERS: ReadonlySet<string> = new Set([
  'accept', 'accept-contact', 'accept-encoding', 'accept-language', 'alert-info', 'allow', 'allow-events',
  'call-info', 'contact', 'content-encoding', 'content-language', 'error-info', 'in-reply-to', 'path',
  'p-asserted-identity', 'p-preferred-identity', 'proxy-require', 'reason', 'record-route', 'reject-contact',
  'require', 'route', 'security-client', 'security-server', 'security-verify', 'service-route', 'supported',
  'unsupported', 'via', 'warning',
]);

/** Lower-cased long name of a header name as received (compact forms expanded). */
export function headerKey(name: string): string {
  const lower = name.toLowerCase();
  return lower.length === 1 ? (COMPACT_FORMS[lower] ?? lower) : lower;
}

/** The spelling to put on the wire for a header name. */
export function canonicalName(name: string, key = headerKey(name)): string {
  return CANONICAL[key] ?? (name.length === 1 ? key : name);
}

export function isListHeader(key: string): boolean {
  return LIST_HEADERS.has(key);
}
