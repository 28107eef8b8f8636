/** Adapts a pure validating policy to a Handler. A validating handler never returns a patch. */

import type { ClusterView } from '../cluster/view.ts'
import type { ValidationInput, ValidationResult } from '../policy/result.ts'
import type { Handler } from './handler.ts'
import { admitted, refused, subjectOf } from './verdict.ts'
import type { AdmissionRequest } from './review.ts'

interface Validator<Facts> {
  /** Reads what the rule needs from the cluster view. */
  readonly gather: (request: AdmissionRequest, view: ClusterView) => Promise<Facts>
  /** The pure rule. */
  readonly validate: (input: ValidationInput, facts: Facts) => ValidationResult
}

/** A validator that needs nothing from the cluster. */
export function pureValidator(
  validate: (input: ValidationInput) => ValidationResult,
): Validator<undefined> {
  return { gather: () => Promise.resolve(undefined), validate: (input) => validate(input) }
}

/** Builds the handler that runs `validator` on the request. */
export function validatingHandler<Facts>(validator: Validator<Facts>): Handler {
  return async (request, { view }) => {
    const facts = await validator.gather(request, view)
    const result = validator.validate(
      {
        operation: request.operation,
        object: request.object ?? undefined,
        oldObject: request.oldObject ?? undefined,
      },
      facts,
    )
    return result.violations.length > 0
      ? refused(result.violations, result.warnings, subjectOf(request))
      : admitted([], result.warnings)
  }
}
