/** `check`'s text report, read back by the CRD parity test. */

export interface CheckVerdict {
  /** Denied by the object's CustomResourceDefinition (`--crds`, `--kubeconfig`). */
  readonly crdDenied: boolean
  /** Denied by one of mcp-admission's webhooks. */
  readonly webhookDenied: boolean
  /** The denial's `field: message` lines. */
  readonly causes: string[]
  readonly warnings: string[]
}

/** The report by object label (`Kind namespace/name`): the verdict, causes and warnings. */
export function parseReport(report: string): Map<string, CheckVerdict> {
  const verdicts = new Map<string, CheckVerdict>()
  let current: CheckVerdict | undefined
  for (const line of report.split('\n')) {
    const denied = /^DENIED {3}(.+) by (its CustomResourceDefinition|the \w+ webhook):$/.exec(line)
    // `unchecked`: nothing judged it (a kind neither the webhooks nor the CRDs given know): not denied.
    const admitted = /^(?:admitted|unchecked) (.+): /.exec(line)
    if (denied || admitted) {
      current = {
        crdDenied: denied?.[2] === 'its CustomResourceDefinition',
        webhookDenied: denied !== null && denied[2] !== 'its CustomResourceDefinition',
        causes: [],
        warnings: [],
      }
      verdicts.set((denied ?? admitted)![1]!, current)
    } else if (line.startsWith('    warning: ')) {
      current?.warnings.push(line.slice('    warning: '.length))
    } else if (line.startsWith('    ') && (current?.crdDenied || current?.webhookDenied)) {
      current.causes.push(line.slice(4))
    }
  }
  return verdicts
}
