import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** A pid no process has: that of a child that ran and was reaped. */
export const deadPid = (): number => spawnSync(process.execPath, ["-e", "0"]).pid!

/**
 * What an mm killed in the middle of its writes leaves in a project's `.mm/`: one temporary
 * file of a dead process in each of `tmp/`, `checkpoints/` and `sessions/`. Returns their paths.
 */
export const plantLeftTemps = (project: string): Array<string> => {
  const dead = deadPid()
  return [
    [".mm/tmp", "a.txt"],
    [".mm/checkpoints", "0".repeat(64)],
    [".mm/sessions", "20261130-100000-0123abcd.json"]
  ].map(([dir, name]) => {
    fs.mkdirSync(path.join(project, dir), { recursive: true, mode: 0o700 })
    const file = path.join(project, dir, `.${name}.${dead}.0badf00d.tmp`)
    fs.writeFileSync(file, "half")
    return file
  })
}
