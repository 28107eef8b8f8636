/**
 * Who wrote the object under review. Two questions, asked of the same setting:
 *  - the `writer` label of `mcp_admission_mutations_total`: the ToolHive operator's service account,
 *    or anyone else. A non-empty patch on the operator's own write means the webhook and the
 *    operator disagree: each such write is undone on the operator's next reconcile, so a platform
 *    team alerts on it. A name alone matches that name in any namespace.
 *  - whether a proxy Deployment write may skip the freshness proof when the API server is too slow
 *    to answer its live reads in time (docs/enforcement.md#a-slow-api-server). That trusts the
 *    write's own stamps, so only the exact account, namespace and name, is trusted: never a name
 *    alone, which anyone allowed to create a service account in some namespace could take.
 */

/** The operator chart's service account in the namespace ToolHive's install guide uses. */
export const DEFAULT_OPERATOR_SERVICE_ACCOUNT = 'toolhive-system/toolhive-operator'

export type Writer = 'operator' | 'other'

export interface WriterIdentity {
  readonly writer: Writer
  /** The exact service account configured with its namespace: the operator itself. */
  readonly exactOperator: boolean
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'

const OTHER: WriterIdentity = { writer: 'other', exactOperator: false }

/**
 * A classifier for `account`, given as `name` (in any namespace) or `namespace/name`, the way
 * the API server names a service account in `userInfo.username`:
 * `system:serviceaccount:<namespace>:<name>`.
 */
export function operatorWriter(
  account = DEFAULT_OPERATOR_SERVICE_ACCOUNT,
): (userInfo: unknown) => WriterIdentity {
  const [namespace, name] = account.includes('/') ? account.split('/', 2) : [undefined, account]
  const operator: WriterIdentity = { writer: 'operator', exactOperator: namespace !== undefined }
  return (userInfo) => {
    const username =
      typeof userInfo === 'object' && userInfo !== null
        ? (userInfo as { username?: unknown }).username
        : undefined
    if (typeof username !== 'string' || !username.startsWith(SERVICE_ACCOUNT_PREFIX)) return OTHER
    const [userNamespace, userName, ...rest] = username
      .slice(SERVICE_ACCOUNT_PREFIX.length)
      .split(':')
    const matches =
      rest.length === 0 &&
      userName === name &&
      (namespace === undefined || userNamespace === namespace)
    return matches ? operator : OTHER
  }
}
