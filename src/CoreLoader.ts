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

/**
 * The kind of run, as far as compiled code goes: each compiles functions the others never call
 * (a turn's in print mode, the banner's on the terminal), and V8's cache holds only what the
 * run that wrote it had compiled. So the cache records the kinds it has seen, and a run of a
 * new kind writes it again at exit, with this run's functions added to those it was given.
 */
export const runKind = (argv: ReadonlyArray<string>): string => {
  const args = argv.slice(2)
  const end = args.indexOf("--")
  const options = end === -1 ? args : args.slice(0, end)
  if (options.some((arg) => arg === "--print" || /^-[a-z]*p[a-z]*$/.test(arg))) return "print"
  if (args[0] === "acp") return "acp"
  if (args[0] !== undefined && /^[a-z]+$/.test(args[0]) && ["sessions", "init", "checkpoints"].includes(args[0])) {
    return "command"
  }
  return "terminal"
}

/** The cache file: one line naming the kinds of run it holds the code of, then V8's data. */
const HEADER = "mm-code-cache 1 "

interface Cached {
  readonly data: Buffer
  readonly kinds: ReadonlyArray<string>
}

const readCache = (file: string | undefined): Cached | undefined => {
  if (file === undefined) return undefined
  try {
    const bytes = fs.readFileSync(file)
    const end = bytes.indexOf(0x0a)
    const header = end === -1 ? "" : bytes.subarray(0, end).toString("latin1")
    if (!header.startsWith(HEADER)) return undefined
    return { data: bytes.subarray(end + 1), kinds: header.slice(HEADER.length).split(",") }
  } catch {
    return undefined
  }
}

const writeCache = (file: string, prefix: string, cached: Cached): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const temp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temp, Buffer.concat([Buffer.from(`${HEADER}${cached.kinds.join(",")}\n`), cached.data]), {
      mode: 0o600
    })
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
  const cached = readCache(cache?.file)
  const source = fs.readFileSync(file, "utf8")
  const wrapper = "(function (exports, require, module, __filename, __dirname) {" + source + "\n})"
  const script = new vm.Script(wrapper, { filename: file, cachedData: cached?.data })
  const module = { exports: {} as { main: (argv: ReadonlyArray<string>) => void } }
  script.runInThisContext()(module.exports, require, module, file, here)
  const kind = runKind(process.argv)
  const kept = cached === undefined || script.cachedDataRejected === true ? [] : cached.kinds
  if (cache !== undefined && !kept.includes(kind)) {
    process.once(
      "exit",
      () => writeCache(cache.file, cache.prefix, { data: script.createCachedData(), kinds: [...kept, kind] })
    )
  }
  return module.exports
}
