/**
 * The image volume's default pull policy, which the API server derives from the reference
 * (SetDefaults_Volume). The pod volumes fingerprint must derive it the same way to hash an image
 * volume identically before and after defaulting. Reference syntax: the Docker distribution
 * grammar (github.com/distribution/reference), written from its documentation.
 */

/**
 * SetDefaults_Volume's choice: Always when the reference names the `latest` tag, or no tag and
 * no digest; IfNotPresent otherwise — including every reference the Docker reference grammar
 * (github.com/distribution/reference `ParseNormalizedNamed`, ported below) rejects.
 */
export function defaultPullPolicy(reference: unknown): string {
  const parsed = typeof reference === 'string' ? parseImageReference(reference) : undefined
  if (parsed === undefined) return 'IfNotPresent'
  return parsed.tag === 'latest' || (parsed.tag === '' && !parsed.digested)
    ? 'Always'
    : 'IfNotPresent'
}

const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*'
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])'
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`
const REFERENCE = new RegExp(
  `^(?:${DOMAIN}/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)` +
    '(?::([\\w][\\w.-]{0,127}))?' +
    '(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*):([0-9a-fA-F]{32,}))?$',
)
const DIGEST_LENGTHS: ReadonlyMap<string, number> = new Map([
  ['sha256', 64],
  ['sha384', 96],
  ['sha512', 128],
])
// Real references are far shorter; the bound keeps regular expression work small.
const MAX_REFERENCE_LENGTH = 1024

function parseImageReference(reference: string): { tag: string; digested: boolean } | undefined {
  if (reference.length > MAX_REFERENCE_LENGTH || /^[a-f0-9]{64}$/.test(reference)) return undefined
  // splitDockerDomain: the first component is a registry when it looks like one.
  const slash = reference.indexOf('/')
  const first = reference.slice(0, Math.max(slash, 0))
  let domain = 'docker.io'
  let remainder = reference
  if (slash !== -1) {
    if (first === 'localhost' || /[.:]/.test(first) || first.toLowerCase() !== first) {
      domain = first === 'index.docker.io' ? 'docker.io' : first
      remainder = reference.slice(slash + 1)
    }
  }
  if (domain === 'docker.io' && !remainder.includes('/')) remainder = `library/${remainder}`
  const remote = remainder.split(':', 1)[0] ?? ''
  if (remote.toLowerCase() !== remote) return undefined
  const match = REFERENCE.exec(`${domain}/${remainder}`)
  if (!match) return undefined
  const [, path = '', tag = '', algorithm, encoded = ''] = match
  if (path.length > 255) return undefined
  if (algorithm !== undefined) {
    const length = DIGEST_LENGTHS.get(algorithm)
    if (length === undefined || !new RegExp(`^[a-f0-9]{${length}}$`).test(encoded)) return undefined
  }
  return { tag, digested: algorithm !== undefined }
}
