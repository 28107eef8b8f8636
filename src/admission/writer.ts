/**
 * Who wrote the object under review, as far as `mcp_admission_mutations_total` tells it apart: the
 * ToolHive operator's service account, or anyone else. A non-empty patch on the operator's own
 * write means the webhook and the operator disagree (DESIGN §4): each such write is undone on the
 * operator's next reconcile, so a platform team alerts on it.
 */

/** The operator chart's service account name (`operator.serviceAccount.name`), any namespace. */
export const DEFAULT_OPERATOR_SERVICE_ACCOUNT = 'toolhive-operator'

export type Writer = 'operator' | 'other'

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'

/**
 * A classifier for `account`, given as `name` (in any namespace) or `namespace/name`, the way
 * the API server names a service account in `userInfo.username`:
 * `system:serviceaccount:<namespace>:<name>`.
 */
export function operatorWriter(
  account = DEFAULT_OPERATOR_SERVICE_ACCOUNT,
): (userInfo: unknown) => Writer {
  const [namespace, name] = account.includes('/') ? account.split('/', 2) : [undefined, account]
  return (userInfo) => {
    const username =
      typeof userInfo === 'object' && userInfo !== null
        ? (userInfo as { username?: unknown }).username
        : undefined
    if (typeof username !== 'string' || !username.startsWith(SERVICE_ACCOUNT_PREFIX)) return 'other'
    const [userNamespace, userName, ...rest] = username
      .slice(SERVICE_ACCOUNT_PREFIX.length)
      .split(':')
    const matches =
      rest.length === 0 &&
      userName === name &&
      (namespace === undefined || userNamespace === namespace)
    return matches ? 'operator' : 'other'
  }
}
