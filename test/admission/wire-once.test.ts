// An AdmissionReview is decoded once where it enters (the server's request, `review`'s input) and
// encoded once where it leaves; the CLI's commands call the admission core (`decide`) with requests
// they build, and read its verdicts as values, never a rendered response back into values
// (docs/architecture.md, "The admission core").

import t from 'tap'
import ts from 'typescript'
import { nodesOf, sourceFiles, where } from '../helpers/source-files.ts'

const FILES = sourceFiles('src')

/** Where each identifier named `name` is used in `src/` outside its own declaration. */
function usesOf(name: string): string[] {
  const uses: string[] = []
  for (const file of FILES)
    for (const node of nodesOf(file.source)) {
      if (!ts.isIdentifier(node) || node.text !== name) continue
      const parent = node.parent
      const declares =
        (ts.isFunctionDeclaration(parent) && parent.name === node) ||
        ts.isImportSpecifier(parent) ||
        ts.isExportSpecifier(parent)
      if (!declares) uses.push(where(file, node))
    }
  return uses
}

const fileOf = (use: string) => use.slice(0, use.lastIndexOf(':'))

t.test('a review is decoded only where one enters: the server and `review`', async (t) => {
  t.same(
    [...new Set(usesOf('decodeReview').map(fileOf))],
    ['src/admission/webhook.ts', 'src/cli/review.ts'],
  )
})

t.test('no code builds a review request for the service to decode again', async (t) => {
  // An envelope is an object literal with `kind: 'AdmissionReview'` and a `request`: only the
  // tests build one (test/helpers/objects.ts), as the API server would.
  const envelopes = FILES.flatMap((file) =>
    [...nodesOf(file.source)]
      .filter(
        (node) =>
          ts.isObjectLiteralExpression(node) &&
          node.properties.some(
            (p) =>
              ts.isPropertyAssignment(p) &&
              p.name.getText() === 'kind' &&
              p.initializer.getText() === "'AdmissionReview'",
          ) &&
          node.properties.some(
            (p) =>
              (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) &&
              p.name.getText() === 'request',
          ),
      )
      .map((node) => where(file, node)),
  )
  t.same(envelopes, [])
})

t.test('the CLI calls the core, not the server entry point that decodes reviews', async (t) => {
  const throughServer = FILES.filter(({ path }) => path.startsWith('src/cli/')).flatMap((file) =>
    [...nodesOf(file.source)]
      .filter(
        (node): node is ts.ImportDeclaration =>
          ts.isImportDeclaration(node) &&
          ts.isStringLiteral(node.moduleSpecifier) &&
          node.moduleSpecifier.text.endsWith('/admission/webhook.ts'),
      )
      .map((node) => where(file, node)),
  )
  // `serve` builds the server's Admission; no other command may reach it.
  t.same(
    throughServer.map(fileOf),
    ['src/cli/serve.ts'],
    'only serve imports the server entry point',
  )
})

t.test('the CLI reads no rendered response back', async (t) => {
  // `status.details.causes` is how a denial renders its violations for kubectl; reading it back
  // into strings is how the CLI once learnt what a rule said.
  const readBack = FILES.filter(({ path }) => path.startsWith('src/cli/')).flatMap((file) =>
    [...nodesOf(file.source)]
      .filter((node) => ts.isPropertyAccessExpression(node) && node.name.text === 'details')
      .map((node) => where(file, node)),
  )
  t.same(readBack, [])
})
