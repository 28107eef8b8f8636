/**
 * The `--client-ca` bundle: the CA certificates the API server's client certificate must chain
 * to. Node accepts any text as `ca` (even none with a certificate in it) and then refuses every
 * client, which with fail-closed webhooks blocks every ToolHive write in the cluster; so the
 * bundle is checked before it is used: every PEM block must be a certificate, and at least one
 * of them a CA.
 */

import { X509Certificate } from 'node:crypto'
import { MiB, readBoundedFile } from '../files/bounded-read.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { fileErrorReason } from '../files/file-errors.ts'
import { StartupProblem } from './startup-problem.ts'

export interface ClientCaBundle {
  /** The file's PEM text, as given to TLS. */
  readonly pem: string
  /** Subjects of the CA certificates in it (for the log). */
  readonly authorities: readonly string[]
}

/** A bundle of a few hundred CAs (a system bundle is ~200 KiB) fits; a file far larger is none. */
export const CLIENT_CA_MAX_BYTES = 4 * MiB

/** Reads and checks the bundle (a regular file, at most 4 MiB); a StartupProblem (setting `clientCaFile`) says what is wrong. */
export async function readClientCa(file: string): Promise<ClientCaBundle> {
  let pem: string
  try {
    pem = (await readBoundedFile(file, CLIENT_CA_MAX_BYTES)).toString('utf8')
  } catch (error) {
    throw new StartupProblem('clientCaFile', file, fileErrorReason(error), { cause: error })
  }
  const checked = checkClientCa(pem)
  if (typeof checked === 'string') throw new StartupProblem('clientCaFile', file, checked)
  return checked
}

/** The bundle, or what is wrong with it (blocks are numbered from 1, in file order). */
export function checkClientCa(pem: string): ClientCaBundle | string {
  const blocks = pemBlocks(pem)
  if (typeof blocks === 'string') return blocks
  if (blocks.length === 0) return 'no PEM certificate in it'
  const authorities: string[] = []
  for (const [index, block] of blocks.entries()) {
    const number = index + 1
    if (block.label !== 'CERTIFICATE') {
      return `block ${number} is a ${block.label}, not a CERTIFICATE`
    }
    let certificate: X509Certificate
    try {
      certificate = new X509Certificate(block.text)
    } catch (error) {
      return `block ${number} is not a valid certificate: ${errorMessage(error)}`
    }
    if (certificate.ca) authorities.push(certificate.subject)
  }
  if (authorities.length === 0) {
    const certificates = blocks.length === 1 ? '1 certificate' : `${blocks.length} certificates`
    return `no CA certificate in it (${certificates}, none with basicConstraints CA:TRUE)`
  }
  return { pem, authorities }
}

interface PemBlock {
  readonly label: string
  readonly text: string
}

const BEGIN = /-----BEGIN ([^-\r\n]+)-----/g

/** The PEM blocks in order; text between them (openssl's `subject=` lines) is ignored. */
function pemBlocks(pem: string): PemBlock[] | string {
  const blocks: PemBlock[] = []
  let searchFrom = 0
  for (;;) {
    BEGIN.lastIndex = searchFrom
    const begin = BEGIN.exec(pem)
    if (begin === null) return blocks
    const label = begin[1] ?? ''
    const endMarker = `-----END ${label}-----`
    const end = pem.indexOf(endMarker, begin.index)
    const nextBegin = pem.indexOf('-----BEGIN ', begin.index + begin[0].length)
    if (end === -1 || (nextBegin !== -1 && nextBegin < end)) {
      return `block ${blocks.length + 1} (${label}) has no END line`
    }
    searchFrom = end + endMarker.length
    blocks.push({ label, text: pem.slice(begin.index, searchFrom) })
  }
}
