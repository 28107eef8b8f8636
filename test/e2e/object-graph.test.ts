/**
 * The ToolHive object graph beside the real operator of both tested releases, newest first:
 * reference warnings, the delete guard at its default and at Deny, namespace deletion and
 * `helm uninstall` (see harness/object-graph-suite.ts).
 */

import t from 'tap'
import { objectGraphSuite } from './harness/object-graph-suite.ts'

for (const release of ['v0.63.0', 'v0.33.0']) await objectGraphSuite(t, release)
