/** Admission warnings (DESIGN §5): short, one line, at most 120 characters each. */

export const MAX_WARNING_LENGTH = 120

/** `text` cut to 120 UTF-16 units with a trailing `…`, never splitting a surrogate pair. */
export function shortWarning(text: string): string {
  if (text.length <= MAX_WARNING_LENGTH) return text
  let cut = MAX_WARNING_LENGTH - 1
  const last = text.charCodeAt(cut - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1
  return `${text.slice(0, cut)}…`
}
