import * as fs from "node:fs"
import * as path from "node:path"
import * as vm from "node:vm"

import { userCacheDir } from "./lib/CacheDir"

declare const MM_CORE_HASH: string | undefined

/** FNV-1a of a string, as 8 hex digits: enough to tell apart the checkouts on one machine. */
const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

/**
 * Where V8's compiled code for this build of mm is kept between runs: under the user's
 * cache directory, one file per checkout (the bundle's path), build (its content hash, size
 * and modification time, so a bundle rebuilt or changed in place never meets old code) and
 * Node version. Two checkouts of different code never share, nor evict, each other's file.
 */
const cacheFile = (file: string): { readonly file: string; readonly prefix: string } | undefined => {
  if (process.env.MM_NO_CODE_CACHE !== undefined || typeof MM_CORE_HASH !== "string") return undefined
  let stamp: string
  try {
    const stat = fs.statSync(file)
    stamp = `${MM_CORE_HASH}-${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}`
  } catch {
    return undefined
  }
  const prefix = `core-${shortHash(file)}-`
  return { file: path.join(userCacheDir(), `${prefix}${stamp}-${process.version}-${process.arch}.v8`), prefix }
}

const readCache = (file: string | undefined): Buffer | undefined => {
  if (file === undefined) return undefined
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

const writeCache = (file: string, prefix: string, data: Buffer): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const temp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temp, data, { mode: 0o600 })
    fs.renameSync(temp, file)
    // this checkout's caches of other builds or Node versions are of no use any more
    for (const name of fs.readdirSync(path.dirname(file))) {
      const earlierFormat = /^core-[0-9a-f]{16}-v/.test(name)
      if ((name.startsWith(prefix) || earlierFormat) && name.endsWith(".v8") && name !== path.basename(file)) {
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
  const cache = cacheFile(file)
  const cachedData = readCache(cache?.file)
  const source = fs.readFileSync(file, "utf8")
  const wrapper = "(function (exports, require, module, __filename, __dirname) {" + source + "\n})"
  const script = new vm.Script(wrapper, { filename: file, cachedData })
  const module = { exports: {} as { main: (argv: ReadonlyArray<string>) => void } }
  script.runInThisContext()(module.exports, require, module, file, here)
  if (cache !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once("exit", () => writeCache(cache.file, cache.prefix, script.createCachedData()))
  }
  return module.exports
}
