// docs/enforcement.md's "Per kind" table names every kind of the kind table, so a kind added to
// the table cannot go without saying what it gets.

import { readFile } from 'node:fs/promises'
import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'

const doc = await readFile(new URL('../../docs/enforcement.md', import.meta.url), 'utf8')
const section = /\n## Per kind\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? ''

t.test('every kind has a row in the Per kind table', async (t) => {
  t.not(section, '', 'the section exists')
  const firstCells = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Kind'))
    .map((line) => line.split('|')[1] ?? '')
  for (const { kind } of TOOLHIVE_KIND_TABLE)
    t.ok(
      firstCells.some((cell) => cell.split(',').some((name) => name.trim() === kind)),
      `${kind} has a row`,
    )
})
