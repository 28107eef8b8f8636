/** The `--help` text on how `check` and `review` read object files and directories. */

import { OBJECT_FILE_EXTENSIONS } from '../cluster/load-files.ts'

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
