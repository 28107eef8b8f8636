import { PassThrough } from 'node:stream'
import t from 'tap'
import { auditProgress } from '../../src/cli/audit-progress.ts'

function stream(isTTY: boolean) {
  const out = new PassThrough()
  const chunks: string[] = []
  out.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')))
  Object.assign(out, { isTTY })
  return { out, text: () => chunks.join('') }
}

t.test('progress is shown on a terminal and cleared at the end', async (t) => {
  const terminal = stream(true)
  const progress = auditProgress(terminal.out)
  progress.count('MCPServer')
  progress.count('MCPServer') // within 250 ms of the first: not redrawn
  progress.done()
  progress.done()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(terminal.text(), '\r\x1b[2Kaudited 1 object (now MCPServer)…\r\x1b[2K')
})

t.test('nothing is written where standard error is no terminal', async (t) => {
  const pipe = stream(false)
  const progress = auditProgress(pipe.out)
  progress.count('MCPServer')
  progress.done()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(pipe.text(), '')
})
