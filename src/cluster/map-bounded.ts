/**
 * `Promise.all` over `items` with at most `limit` calls of `each` under way at once: a list that
 * came from the API server (a group's versions) may be of any length, and one request per item
 * all at once would be a burst of that many requests at a server that may already be struggling.
 */

/** Each item's result, in the order of `items`; rejects with the first failure (no new calls after it). */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  each: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  let failed = false
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        results[index] = await each(items[index] as T)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  const workers = Array.from({ length: Math.min(limit, items.length) }, worker)
  await Promise.all(workers)
  return results
}
