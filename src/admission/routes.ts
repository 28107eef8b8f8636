/** The product's route table: which policy answers which request (DESIGN §3–§5). */

import { mutateRunConfigMap } from '../policy/content-checksum.ts'
import { mutatingHandler, pureMutator } from './mutating.ts'
import type { Route } from './router.ts'

export function productRoutes(): Route[] {
  return [
    {
      webhook: 'mutate',
      group: '',
      kind: 'ConfigMap',
      subResource: '',
      operations: ['CREATE', 'UPDATE'],
      handler: mutatingHandler(pureMutator(mutateRunConfigMap)),
    },
  ]
}
