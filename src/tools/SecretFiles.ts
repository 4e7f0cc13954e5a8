import * as path from "node:path"

/**
 * Files whose content is likely a secret (issue 43): read only with a question, even inside the
 * project, in every mode but `allow`. By the file's name alone, so that it costs nothing:
 * `.env` and `.env.*`, private keys and certificates (`*.pem`, `*.key`, `id_rsa*`, `id_ed25519*`,
 * `id_ecdsa*`, `id_dsa*`), and the files package managers and tools keep tokens in (`.npmrc`,
 * `.netrc`, `.pypirc`, `.pgpass`). The configuration's `secrets:` globs add to these.
 */
const SECRET_NAME =
  /^(?:\.env(?:\..+)?|.+\.(?:pem|key)|id_(?:rsa|ed25519|ecdsa|dsa)(?:[._-].*)?|\.npmrc|\.netrc|\.pypirc|\.pgpass)$/

/** Whether a file's name looks like it holds a secret (any directory part is ignored). */
export const looksSecret = (file: string): boolean => SECRET_NAME.test(path.basename(file))
