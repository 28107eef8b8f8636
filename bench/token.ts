/**
 * Every request the benchmark sends is a different object, as on a real API server: review
 * bodies carry a placeholder that the load generator replaces, per request, with a counter (in
 * the uid and in content that policies read: a volume's ConfigMap name, a ConfigMap's data, a
 * webhook config's name). Same length, so Content-Length holds. Without it, any cache keyed on
 * content would make a benchmark of identical requests measure nothing but cache hits.
 */

export const TOKEN = 'zqzqzqzq'

/** `value` as 8 lowercase hex digits: valid in uids and in Kubernetes names. */
export function tokenValue(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0')
}

/** `body` with every placeholder replaced by `value`. */
export function withToken(body: string, value: number): string {
  return body.replaceAll(TOKEN, tokenValue(value))
}
