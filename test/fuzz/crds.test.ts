/**
 * `check --crds` over hostile CRDs and objects, with a fixed seed and a bounded number of inputs
 * (the property is in crd-properties.ts; `npm run fuzz` runs it longer).
 */

import { CRD_PROPERTIES } from './crd-properties.ts'
import { testProperties } from './bounded.ts'

testProperties(CRD_PROPERTIES, 'every input held')
