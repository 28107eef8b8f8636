import t from 'tap'
import { parseDuration } from '../../../src/policy/go/duration.ts'

t.test('Go durations', async (t) => {
  const cases: [string, number | undefined][] = [
    ['0', 0],
    ['500ms', 500],
    ['1s', 1000],
    ['30s', 30_000],
    ['31s', 31_000],
    ['1m', 60_000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['.5s', 500],
    ['2h', 7_200_000],
    ['100us', 0.1],
    ['1ns', 1e-6],
    ['abc', undefined],
    ['', undefined],
    ['5', undefined],
    ['-1s', undefined],
    ['1s ', undefined],
    ['s', undefined],
    ['1x', undefined],
    ['1s2', undefined],
  ]
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, JSON.stringify(text))
})
