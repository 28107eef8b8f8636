/**
 * The committed webhook configurations (templates/webhooks.yaml, with the ToolHive rules it
 * includes from _toolhive-kinds.tpl and the defaults of values.yaml) against the tables, without
 * helm: the template actions are replaced by what they stand for (the rules a define holds, a
 * value, the failurePolicy helper's arguments), then each webhook is read as YAML. The rules are
 * compared as what they send (group, version, resource, operation), so this holds whatever rules
 * the generator lets share; generated.test.ts proves the committed files generated, and the
 * e2e chart test renders them with helm. Also what the generator makes of other tables.
 */

import { readFile } from 'node:fs/promises'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import { RULE_TABLE, matchesToolHiveKinds } from '../../src/policy/rules.ts'
import type { RuleEntry } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'
import type { WebhookEntry } from '../../src/policy/webhooks.ts'
import { failsClosedBy, mayFailClosed } from './failure-policy.ts'
import { MANIFESTS_DIR } from './generate.ts'
import { KINDS_TEMPLATE } from './kinds-template.ts'
import { VALUES, VALUES_SCHEMA, WEBHOOKS_TEMPLATE, webhooksTemplate } from './webhooks-template.ts'

type Any = Record<string, any>

const read = (path: string) => readFile(`${MANIFESTS_DIR}/${path}`, 'utf8')
const values = parse(await read(VALUES)) as { webhooks: Record<string, Any> }

/** The bodies of the defines of _toolhive-kinds.tpl, by name. */
function defines(text: string): Map<string, string> {
  const found = text.matchAll(/\{\{- define "([^"]+)" -\}\}\n([\s\S]*?)\n\{\{- end -\}\}/g)
  return new Map([...found].map(([, name, body]) => [name!, body!]))
}

/** ` "a" (list "X" "Y") "b" (list "Z")`, the body of a Helm dict of lists, as an object. */
function helmDict(body: string): Record<string, string[]> {
  return Object.fromEntries(
    [...body.matchAll(/"([^"]+)" \(list((?: "\w+")+)\)/g)].map(([, key, list]) => [
      key!,
      [...list!.matchAll(/"(\w+)"/g)].map(([, item]) => item!),
    ]),
  )
}

/** webhooks.yaml with every template action replaced by what it stands for, as YAML objects. */
function standIn(template: string, tpl: string): Any[] {
  const bodies = defines(tpl)
  let text = template.replace(
    /\{\{- define "mcp-admission.webhookCommon" -\}\}[\s\S]*?\{\{- end -\}\}\n/,
    '',
  )
  // The leading statements (header, variables), which render nothing.
  while (text.startsWith('{{-')) text = text.slice(text.indexOf('-}}') + 3).replace(/^\n/, '')
  text = text
    .replace(/\{\{- include "mcp-admission\.metadata" .*\}\}/g, '\n  name: mcp-admission')
    .replace(
      /\{\{ \.Values\.webhooks\.(\w+)\.timeoutSeconds \}\}/g,
      (_, id: string) => `${values.webhooks[id]?.['timeoutSeconds']}`,
    )
    .replace(
      /\{\{ include "mcp-admission\.failurePolicy" \(dict "root" \. "webhook" "(\w+)" "value" \.Values\.webhooks\.(\w+)\.failurePolicy(?: "rules" \(dict((?: "[^"]+" \(list(?: "\w+")+\))*)\))?\) \}\}/g,
      (_, webhook: string, id: string, rules: string | undefined) =>
        JSON.stringify({
          helper: webhook,
          value: values.webhooks[id]?.['failurePolicy'],
          ...(rules === undefined ? {} : { rules: helmDict(rules) }),
        }),
    )
    .replace(
      /\{\{- include "([^"]+)" \. \| nindent 6 \}\}/g,
      (_, name: string) =>
        `\n${(bodies.get(name) ?? `missing define ${name}`).replace(/^/gm, '      ')}`,
    )
    .replace(
      /\{\{- include "mcp-admission\.webhookCommon" \(dict "root" \. "path" "([^"]+)"\) \| nindent 4 \}\}/g,
      '\n    clientConfig: {service: {path: $1}}',
    )
  if (text.includes('{{')) throw new Error(`an action left: ${/.*\{\{.*/.exec(text)?.[0]}`)
  return parseAllDocuments(text, { version: '1.1' }).map((document) => document.toJS() as Any)
}

/** What a rule list sends: `group/version/resource OPERATION`, sorted. */
const sends = (rules: readonly Any[]) =>
  rules
    .flatMap((rule) =>
      (rule['apiGroups'] as string[]).flatMap((group) =>
        (rule['apiVersions'] as string[]).flatMap((version) =>
          (rule['resources'] as string[]).flatMap((resource) =>
            (rule['operations'] as string[]).map(
              (operation) => `${group}/${version}/${resource} ${operation} ${rule['scope']}`,
            ),
          ),
        ),
      ),
    )
    .sort()

// The tables as their types say, not as today's entries happen to be.
const KINDS: readonly ToolHiveKindEntry[] = TOOLHIVE_KIND_TABLE
const RULES: readonly RuleEntry[] = RULE_TABLE

/** What the rule table says `webhook` is sent, in the same form. */
const tableSends = (webhook: WebhookEntry) =>
  [
    ...new Set(
      RULES.filter((rule) => rule.webhook === webhook.id).flatMap((rule) =>
        matchesToolHiveKinds(rule.matches)
          ? rule.matches.flatMap((kind) => {
              const entry = KINDS.find((one) => one.kind === kind)!
              const scope = entry.namespaced ? 'Namespaced' : 'Cluster'
              return entry.versions.flatMap((version) =>
                rule.operations.map(
                  (operation) => `${entry.group}/${version}/${entry.plural} ${operation} ${scope}`,
                ),
              )
            })
          : rule.matches.flatMap((match) =>
              rule.operations.map(
                (operation) =>
                  `${match.resourceGroup}/${match.version}/${match.resource}${match.subResource ? `/${match.subResource}` : ''} ${operation} Namespaced`,
              ),
            ),
      ),
    ),
  ].sort()

const configurations = standIn(await read(WEBHOOKS_TEMPLATE), await read(KINDS_TEMPLATE))

t.test('each configuration holds the webhooks of its path, in table order', async (t) => {
  t.same(
    configurations.map((configuration) => [
      configuration['kind'],
      (configuration['webhooks'] as Any[]).map((webhook) => webhook['name']),
    ]),
    [
      [
        'MutatingWebhookConfiguration',
        WEBHOOK_TABLE.filter((webhook) => webhook.path === 'mutate').map((webhook) => webhook.name),
      ],
      [
        'ValidatingWebhookConfiguration',
        WEBHOOK_TABLE.filter((webhook) => webhook.path === 'validate').map(
          (webhook) => webhook.name,
        ),
      ],
    ],
  )
})

t.test('each webhook is what the webhook and rule tables say', async (t) => {
  const rendered = configurations.flatMap((configuration) => configuration['webhooks'] as Any[])
  for (const webhook of WEBHOOK_TABLE as readonly WebhookEntry[]) {
    const one = rendered.find((item) => item['name'] === webhook.name)
    if (one === undefined) {
      t.fail(`${webhook.name}: not rendered`)
      continue
    }
    t.equal(one['clientConfig'].service.path, `/${webhook.path}`, `${webhook.id}: its path`)
    if (mayFailClosed(webhook, RULES))
      t.same(
        one['failurePolicy'],
        {
          helper: webhook.path,
          value: webhook.failurePolicy,
          ...(webhook.path === 'validate'
            ? {
                rules: Object.fromEntries(
                  failsClosedBy(webhook, RULES).map((rule) => [rule.name, rule.actions.default]),
                ),
              }
            : {}),
        },
        `${webhook.id}: its default failurePolicy, through the helper for its path, with each rule that may deny and its default`,
      )
    else t.equal(one['failurePolicy'], 'Ignore', `${webhook.id}: never fails closed`)
    t.equal(one['timeoutSeconds'], webhook.timeoutSeconds, `${webhook.id}: its default timeout`)
    t.equal(one['reinvocationPolicy'], webhook.reinvocation?.policy, `${webhook.id}: reinvocation`)
    t.same(one['objectSelector'], webhook.objectSelector?.selector, `${webhook.id}: objectSelector`)
    t.same(
      one['matchConditions'],
      webhook.matchConditions?.map((condition) => ({
        name: condition.name,
        expression: condition.expression.join(' '),
      })),
      `${webhook.id}: matchConditions`,
    )
    t.same(sends(one['rules'] as Any[]), tableSends(webhook), `${webhook.id}: what it is sent`)
    t.ok(tableSends(webhook).length > 0, `${webhook.id}: sent something`)
  }
})

t.test('values.yaml and its schema hold each webhook of the table, in table order', async (t) => {
  t.same(
    Object.entries(values.webhooks),
    WEBHOOK_TABLE.map((webhook) => [
      webhook.id,
      { failurePolicy: webhook.failurePolicy, timeoutSeconds: webhook.timeoutSeconds },
    ]),
  )
  const schema = JSON.parse(await read(VALUES_SCHEMA)) as Any
  const property = schema['properties'].webhooks as Any
  const ids = WEBHOOK_TABLE.map((webhook) => webhook.id)
  t.same(property['required'], ids)
  t.same(Object.keys(property['properties']), ids)
  // The defaults are valid values: the definition each entry refers to admits them. One that
  // never fails closed admits only Ignore.
  for (const webhook of WEBHOOK_TABLE as readonly WebhookEntry[]) {
    const ref = property['properties'][webhook.id].$ref as string
    t.equal(
      ref,
      mayFailClosed(webhook, RULES) ? '#/definitions/webhook' : '#/definitions/webhookFailingOpen',
      `${webhook.id}: its definition`,
    )
    const definition = schema['definitions'][ref.split('/').at(-1)!] as Any
    t.ok(definition['properties'].failurePolicy.enum.includes(webhook.failurePolicy))
    t.ok(
      Number.isInteger(webhook.timeoutSeconds) &&
        webhook.timeoutSeconds >= definition['properties'].timeoutSeconds.minimum &&
        webhook.timeoutSeconds <= definition['properties'].timeoutSeconds.maximum,
      `${webhook.id}: timeoutSeconds within the schema's range`,
    )
  }
})

t.test('other tables: a webhook serving no rule stops the generator', async (t) => {
  t.throws(
    () =>
      webhooksTemplate(
        WEBHOOK_TABLE,
        RULE_TABLE.filter((rule) => rule.webhook !== 'workloads'),
      ),
    /webhook workloads serves no rule of the rule table/,
  )
  // Only validating webhooks: one configuration, no separator.
  const validating = webhooksTemplate(
    WEBHOOK_TABLE.filter((webhook) => webhook.path === 'validate'),
  )
  t.notMatch(validating, 'MutatingWebhookConfiguration')
  t.notMatch(validating, /^---$/m)
  // A ToolHive kind and another resource on one webhook: its included rules, then the other's.
  const mixed = RULE_TABLE.map((rule) =>
    rule.name === 'workload' ? { ...rule, webhook: 'deployments' as const } : rule,
  )
  t.match(
    webhooksTemplate(
      WEBHOOK_TABLE.filter((webhook) => webhook.id !== 'workloads'),
      mixed,
    ),
    '    rules:\n      {{- include "mcp-admission.toolhive.webhookRules.deployments" . | nindent 6 }}\n      - apiGroups: [apps]\n',
  )
})
