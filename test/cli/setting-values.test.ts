// The kinds of value the settings table gives its settings (src/cli/setting-values.ts).
import t from 'tap'
import { duration, LONGEST_TIMER, ruleActions } from '../../src/cli/setting-values.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { parseDuration } from '../../src/policy/go/duration.ts'

t.test('LONGEST_TIMER is 2^31−1 ms, the longest delay a Node timer holds', async (t) => {
  t.equal(parseDuration(LONGEST_TIMER), 2 ** 31 - 1)
})

t.test(
  "a duration bound the table cannot hold is the program's mistake, found at once",
  async (t) => {
    t.throws(() => duration({ max: '600h' }), /not a timer's duration: 600h/)
    t.throws(() => duration({ min: 'soon', max: LONGEST_TIMER }), /not a timer's duration: soon/)
  },
)

t.test('a minimum is said in the help as written; none, nothing said', async (t) => {
  t.equal(duration({ min: '90s', max: LONGEST_TIMER }).hint, 'at least 90s')
  t.equal(duration({ max: LONGEST_TIMER }).hint, undefined)
})

t.test('rule actions: the help names every rule of the table', async (t) => {
  t.equal(ruleActions.hint, `rules: ${RULE_TABLE.map((rule) => rule.name).join(', ')}`)
})

t.test('rule actions: every problem is a line of its own, each named by its rule', async (t) => {
  const read = ruleActions.read('workload=Deny;nope=Warn;delete-guard=Deny')
  t.same(read.value, new Map(), 'nothing is chosen from a refused text')
  t.same(read.problem?.split('\n'), [
    'workload: Deny not allowed for this rule, which never refuses a write; it allows Warn, Audit',
    `no rule is named "nope"; the rules are ${RULE_TABLE.map((rule) => rule.name).join(', ')}`,
  ])
  t.same(ruleActions.read('delete-guard=Deny'), { value: new Map([['delete-guard', ['Deny']]]) })
})
