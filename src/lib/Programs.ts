/**
 * Where mm finds the programs it starts itself (bash, sh, env, git, bwrap): on PATH, but never
 * in a directory a confined command could have written. A PATH that holds the project's own
 * `node_modules/.bin` (as `npx` and npm scripts set it), a virtualenv's `bin` or a relative
 * entry would otherwise let a file the model wrote there run in the program's place, outside
 * the sandbox — even as bubblewrap itself.
 */
import * as fs from "node:fs"
import * as path from "node:path"

import { within } from "./RealPath"

const realDir = (dir: string): string | undefined => {
  try {
    return fs.realpathSync(dir)
  } catch {
    return undefined
  }
}

const isExecutableFile = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const found = new Map<string, string>()

/**
 * The absolute path of `name` from `env`'s PATH, skipping entries that are relative or lie
 * (links followed) inside one of `avoid`; `name` itself when it has a slash or is found
 * nowhere else (starting it then fails as it would have).
 */
export const programPath = (
  name: string,
  avoid: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env
): string => {
  if (name.includes("/")) return name
  const key = `${name}\0${avoid.join("\0")}\0${env.PATH ?? ""}`
  const known = found.get(key)
  if (known !== undefined) return known
  const avoided = avoid.map((dir) => realDir(dir) ?? path.resolve(dir))
  for (const entry of (env.PATH ?? "").split(path.delimiter)) {
    if (entry === "" || !path.isAbsolute(entry)) continue
    const dir = realDir(entry)
    if (dir === undefined || avoided.some((bad) => within(bad, dir))) continue
    const file = path.join(dir, name)
    if (!isExecutableFile(file)) continue
    found.set(key, file)
    return file
  }
  return name
}
