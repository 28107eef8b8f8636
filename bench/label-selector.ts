/**
 * Label selectors as the API server reads `?labelSelector=` (the set-based grammar: `k`, `!k`,
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, requirements joined by commas), for the
 * stand-in API server (list-server.ts): a list it answers must hold only what the selector keeps,
 * or a client that forgot its selector would look no different from one that sent it.
 */

type Requirement = (labels: Readonly<Record<string, string>>) => boolean

/** A predicate over an object's labels; throws on a selector the API server would refuse. */
export function parseLabelSelector(selector: string): Requirement {
  const requirements = splitRequirements(selector).map(parseRequirement)
  return (labels) => requirements.every((requirement) => requirement(labels))
}

/** Splits on the commas between requirements, not on those inside `in (…)`. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]
    if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i))
      start = i + 1
    }
  }
  parts.push(selector.slice(start))
  return parts.map((part) => part.trim()).filter((part) => part !== '')
}

const SET = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/
const EQUALITY = /^([^\s!=]+)\s*(==|=|!=)\s*(\S*)$/
const EXISTS = /^(!?)([^\s!=(),]+)$/

function parseRequirement(text: string): Requirement {
  const set = SET.exec(text)
  if (set) {
    const [, key, operator, list] = set as unknown as [string, string, string, string]
    const values = new Set(list.split(',').map((value) => value.trim()))
    // As the API server: `notin` also keeps objects without the label.
    return operator === 'in'
      ? (labels) => Object.hasOwn(labels, key) && values.has(labels[key]!)
      : (labels) => !Object.hasOwn(labels, key) || !values.has(labels[key]!)
  }
  const equality = EQUALITY.exec(text)
  if (equality) {
    const [, key, operator, value] = equality as unknown as [string, string, string, string]
    return operator === '!='
      ? (labels) => labels[key] !== value
      : (labels) => Object.hasOwn(labels, key) && labels[key] === value
  }
  const exists = EXISTS.exec(text)
  if (exists) {
    const [, not, key] = exists as unknown as [string, string, string]
    return not === ''
      ? (labels) => Object.hasOwn(labels, key)
      : (labels) => !Object.hasOwn(labels, key)
  }
  throw new Error(`unable to parse requirement: ${JSON.stringify(text)}`)
}
