/** What `audit --help` says after its options: exit codes, and the permissions it reads with. */

import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import { MAX_LIST_PAGES } from '../cluster/list-pages.ts'
import { MAX_THROTTLED_RETRIES } from '../cluster/throttled-reads.ts'

/** The ToolHive resources, as many to a line as fit in 90 characters. */
function pluralLines(): string {
  const lines: string[] = []
  for (const { plural } of TOOLHIVE_KIND_TABLE) {
    const last = lines.at(-1)
    if (last !== undefined && last.length + plural.length + 2 <= 90)
      lines[lines.length - 1] = `${last}, ${plural}`
    else lines.push(plural)
  }
  return lines.map((line) => `\n    ${line}`).join(',')
}

export const AUDIT_HELP = `
Durations: a whole number of seconds (60) or Go syntax (500ms, 2m, 1h30m), as kubectl's
--request-timeout. --request-timeout bounds each request, its whole answer included; a 429 is
waited out (Retry-After, at most a minute a time) up to ${MAX_THROTTLED_RETRIES} times. Without --timeout the
audit has no overall deadline: it reads the whole cluster, however long that takes.

Exit status:
  0  nothing would be denied or patched (warnings do not count)
  1  findings: a write now would deny or patch an object, or an item could not be audited
  2  could not audit: a usage error; a cluster that cannot be reached or read, API discovery
     included; a list that did not end (a repeated continue token, or ${MAX_LIST_PAGES.toLocaleString('en')} pages);
     a request still throttled (429) after ${MAX_THROTTLED_RETRIES} retries; or --timeout reached

Permissions (RBAC): get and list, in every namespace, on
  ${TOOLHIVE_GROUP}, each of these the cluster serves:${pluralLines()}
  "" (core): configmaps
  apps: deployments
API discovery needs nothing more: every authenticated user may read it (system:discovery).
`
