import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as vm from "node:vm"

declare const MM_CORE_HASH: string | undefined

/**
 * Where V8's compiled code for this build of mm is kept between runs: under the user's
 * cache directory, one file per build and Node version, so a stale file is never used.
 */
const cacheFile = (): string | undefined => {
  if (process.env.MM_NO_CODE_CACHE !== undefined || typeof MM_CORE_HASH !== "string") return undefined
  const base = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache")
  return path.join(base, "mm", `core-${MM_CORE_HASH}-${process.version}-${process.arch}.v8`)
}

const readCache = (file: string | undefined): Buffer | undefined => {
  if (file === undefined) return undefined
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

const writeCache = (file: string, data: Buffer): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const temp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temp, data, { mode: 0o600 })
    fs.renameSync(temp, file)
    // caches of other builds or Node versions are of no use any more
    for (const name of fs.readdirSync(path.dirname(file))) {
      if (name.startsWith("core-") && name.endsWith(".v8") && name !== path.basename(file)) {
        fs.rmSync(path.join(path.dirname(file), name), { force: true })
      }
    }
  } catch {
    // a cache that cannot be written only costs start-up time
  }
}

/**
 * Loads `mm-core.cjs` beside this file. Node 20 has no compile cache for modules, so the
 * bundle is compiled as a script with V8's cached data, which skips most of the parsing
 * and compiling on every start after the first.
 */
export const loadCore = (): { main: (argv: ReadonlyArray<string>) => void } => {
  const here = __dirname
  const file = path.join(here, "mm-core.cjs")
  const cache = cacheFile()
  const cachedData = readCache(cache)
  const source = fs.readFileSync(file, "utf8")
  const wrapper = "(function (exports, require, module, __filename, __dirname) {" + source + "\n})"
  const script = new vm.Script(wrapper, { filename: file, cachedData })
  const module = { exports: {} as { main: (argv: ReadonlyArray<string>) => void } }
  script.runInThisContext()(module.exports, require, module, file, here)
  if (cache !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once("exit", () => writeCache(cache, script.createCachedData()))
  }
  return module.exports
}
