/** mcp-admission beside the real ToolHive operator v0.63.0 (see harness/operator-suite.ts). */

import t from 'tap'
import { operatorSuite } from './harness/operator-suite.ts'

await operatorSuite(t, 'v0.63.0')
