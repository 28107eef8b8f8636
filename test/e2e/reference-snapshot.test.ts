/**
 * The committed snapshot of every reference property (tools/reference-snapshot.json), which
 * test/policy/reference-snapshot.test.ts holds the kind table to, regenerated from the newest
 * release's CRDs as the Go module proxy serves them: a release that adds, moves or drops a
 * reference fails here until the snapshot (`node tools/reference-snapshot.ts`) and the table
 * follow.
 */

import { readFile } from 'node:fs/promises'
import t from 'tap'
import {
  SNAPSHOT_FILE,
  SNAPSHOT_RELEASE,
  snapshotOf,
  snapshotText,
} from '../../tools/reference-snapshot.ts'
import { releaseSources } from './toolhive/releases.ts'

t.test(`the snapshot is what ${SNAPSHOT_RELEASE}'s CRDs hold`, async (t) => {
  const { crds } = await releaseSources(SNAPSHOT_RELEASE)
  const regenerated = snapshotText(await snapshotOf(crds, SNAPSHOT_RELEASE))
  const committed = await readFile(SNAPSHOT_FILE, 'utf8')
  t.equal(
    regenerated,
    committed,
    'run `node tools/reference-snapshot.ts` and update the kind table',
  )
  t.ok(JSON.parse(committed).references.length > 100, 'the CRDs were read: every reference')
})
