/** The `--help` text of `check` and `review`: how they read object files, where CRDs come from. */

import { OBJECT_FILE_EXTENSIONS } from '../cluster/load-files.ts'
import { TOOLHIVE_GROUP } from '../policy/kinds.ts'

const EXTENSIONS = OBJECT_FILE_EXTENSIONS.map((e) => `*${e}`).join(', ')

export const OBJECT_FILES_HELP = `
Object files (check PATH…, --objects PATH):
  A file is read whatever its name, as YAML (documents separated by ---) or
  JSON; a kind ending in List stands for its items.
  A directory is read like kubectl apply -R: its ${EXTENSIONS} files
  (extensions in any case), recursively, in name order; other files are
  ignored. Symbolic links are followed; a file or directory reached twice is
  read once, so link cycles end. Hidden entries are read, except names that
  start with ".." (the kubelet's ..data and timestamped directories in a
  mounted ConfigMap or Secret: its files are read once, through their links).
  A path that is missing, unreadable or yields no object is an error (exit 2).
`

/** The `--help` text on `--crds` and `--kubeconfig` (check and review). */
export const CRD_SOURCES_HELP = `
CustomResourceDefinitions (--crds PATH, or --kubeconfig FILE):
  Objects of the CRDs' kinds are judged first as the API server judges them
  (unknown fields pruned and named, refused with --strict; then the served
  version's schema and x-kubernetes-validations rules), then by the webhooks.
  --crds reads files or directories like any PATH. --kubeconfig FILE lists the
  cluster's CRDs (the file's current context; KUBECONFIG is not read) and keeps
  those of group ${TOOLHIVE_GROUP}: nothing else is read from the cluster
  (what it holds comes from --objects). The two cannot be combined. A cluster
  that cannot be read, or serves no ToolHive CRD, is an error (exit 2).
`
