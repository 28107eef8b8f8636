/** Adapts a pure validating policy to a Handler. A validating handler never returns a patch. */

import type { ClusterView } from '../cluster/view.ts'
import type { DeleteProtection } from '../policy/delete-guard.ts'
import type { ValidationInput, ValidationResult } from '../policy/result.ts'
import type { Handler, HandlerContext } from './handler.ts'
import { admitted, refused, subjectOf } from './verdict.ts'
import type { AdmissionRequest } from './review.ts'

interface Validator<Facts> {
  /** Reads what the rule needs from the cluster view. */
  readonly gather: (
    request: AdmissionRequest,
    view: ClusterView,
    context: HandlerContext,
  ) => Promise<Facts>
  /** The pure rule; `protection` is a delete guard's, for its metric. */
  readonly validate: (
    input: ValidationInput,
    facts: Facts,
  ) => ValidationResult & { readonly protection?: DeleteProtection }
}

/** A validator that needs nothing from the cluster. */
export function pureValidator(
  validate: (input: ValidationInput) => ValidationResult,
): Validator<undefined> {
  return { gather: () => Promise.resolve(undefined), validate: (input) => validate(input) }
}

/** Builds the handler that runs `validator` on the request. */
export function validatingHandler<Facts>(validator: Validator<Facts>): Handler {
  return async (request, context) => {
    const facts = await validator.gather(request, context.view, context)
    const result = validator.validate(
      {
        operation: request.operation,
        object: request.object ?? undefined,
        oldObject: request.oldObject ?? undefined,
      },
      facts,
    )
    const protection = result.protection === undefined ? {} : { protection: result.protection }
    return result.violations.length > 0
      ? { ...refused(result.violations, result.warnings, subjectOf(request)), ...protection }
      : { ...admitted([], result.warnings), ...protection }
  }
}
