/**
 * Loaded into every test process (`node-arg` in .taprc) and, through NODE_OPTIONS, into every
 * Node process a test starts (`serve`, the CLI): source maps are read for our own files only, not
 * for node_modules. tap's process-info hook turns source maps on for every module, and reading
 * the maps of every dependency (a thousand files for @kubernetes/client-node alone) about doubled
 * the cost of starting a process: ~0.7 s of CPU each, seconds for one that loads the Kubernetes
 * client. Our code runs as TypeScript by type stripping, so its positions are the source's either
 * way; coverage is measured over src/ only; a stack frame inside a dependency shows the
 * dependency's published JavaScript, which is what runs.
 */

import { setSourceMapsSupport } from 'node:module'

setSourceMapsSupport(true, { nodeModules: false, generatedCode: false })

// After tap's own `--import` in NODE_OPTIONS, so it runs after the hook that turns maps on.
const self = `--import=${import.meta.url}`
const inherited = process.env['NODE_OPTIONS'] ?? ''
if (!inherited.includes(self)) process.env['NODE_OPTIONS'] = `${inherited} ${self}`.trim()
