import * as NodeFs from "node:fs"

/**
 * Reading a small file that someone else may have put in place (a project's `.git/config`,
 * `.gitignore`, a skill, mm's own files under `.mm/`): only a regular file is read. It is
 * opened with O_NONBLOCK and checked on its descriptor, so that a named pipe or a device
 * put where the file should be is refused instead of holding mm until someone writes to it.
 */

/** The calls it needs: the session store passes its own, so that tests can make them fail. */
type ReadCalls = Pick<typeof NodeFs, "openSync" | "fstatSync" | "readSync" | "closeSync">

/** An error like the system's, with `code` ENOTREG (not a regular file) or EFBIG (over the size given). */
const refused = (file: string, code: "ENOTREG" | "EFBIG", what: string): Error =>
  Object.assign(new Error(`${file}: ${what}`), { code })

/**
 * The bytes of `file` when it is a regular file of at most `maxBytes` bytes. Throws what
 * opening or reading throws (ENOENT…), or an error with code ENOTREG or EFBIG.
 */
export const readRegularSync = (file: string, maxBytes: number, fs: ReadCalls = NodeFs): Buffer => {
  const fd = fs.openSync(file, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK)
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw refused(file, "ENOTREG", "not a regular file")
    if (stat.size > maxBytes) throw refused(file, "EFBIG", `${stat.size} bytes, over ${maxBytes}`)
    // read to the end, one byte past the limit at most: a file may grow after its fstat
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1)
    let filled = 0
    for (let n = -1; n !== 0 && filled < buffer.length; filled += n) {
      n = fs.readSync(fd, buffer, filled, buffer.length - filled, filled)
    }
    if (filled > maxBytes) throw refused(file, "EFBIG", `over ${maxBytes} bytes`)
    return buffer.subarray(0, filled)
  } finally {
    fs.closeSync(fd)
  }
}

/** `readRegularSync` as UTF-8 text. */
export const readRegularTextSync = (file: string, maxBytes: number, fs: ReadCalls = NodeFs): string =>
  readRegularSync(file, maxBytes, fs).toString("utf8")
