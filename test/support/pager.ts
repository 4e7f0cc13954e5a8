import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * A $PAGER that shows nothing and keeps what it was given: the text on its stdin, the file its
 * stdin was read from and that file's mode, each written to a file of its own.
 */
export const recordingPager = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-pager-")))
  const script = path.join(dir, "pager.sh")
  fs.writeFileSync(
    script,
    [
      `from=$(readlink /proc/$$/fd/0)`,
      `stat -c %a "$from" > "${dir}/mode"`,
      `printf %s "$from" > "${dir}/from"`,
      `cat > "${dir}/seen"`
    ].join("\n") + "\n"
  )
  const read = (name: string): string | undefined => {
    try {
      return fs.readFileSync(path.join(dir, name), "utf8")
    } catch {
      return undefined
    }
  }
  return {
    /** The value for PAGER. */
    pager: `sh ${script}`,
    /** What the pager read, or undefined when it never ran. */
    seen: () => read("seen"),
    /** The mode of the file it read, in octal (`600`). */
    mode: () => read("mode")?.trim(),
    /** The file it read. */
    from: () => read("from")
  }
}
