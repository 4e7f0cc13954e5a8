import * as fs from "node:fs"
import * as path from "node:path"
import * as vm from "node:vm"

import { userCacheDir } from "./lib/CacheDir"

declare const MM_CORE_HASH: string | undefined
/** How the build found the core: "latin1" when it is ASCII alone. */
declare const MM_CORE_ENCODING: "latin1" | "utf8" | undefined

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
 * The kind of run, as far as compiled code goes: each compiles functions the others never call
 * (a turn's in print mode, the banner's on the terminal), and V8's cache holds only what the
 * run that wrote it had compiled. So each kind has a cache of its own: a run reads only the
 * code it will use, and never the (larger) union of every kind's.
 */
export const runKind = (argv: ReadonlyArray<string>): string => {
  const args = argv.slice(2)
  const end = args.indexOf("--")
  const options = end === -1 ? args : args.slice(0, end)
  if (options.some((arg) => arg === "--print" || /^-[a-z]*p[a-z]*$/.test(arg))) return "print"
  if (args[0] === "acp") return "acp"
  if (args[0] !== undefined && ["sessions", "init", "checkpoints"].includes(args[0])) return "command"
  return "terminal"
}

interface CacheFile {
  readonly file: string
  /** Every cache file of this checkout starts so. */
  readonly checkout: string
  /** Every cache file of this checkout, build and Node version starts so (one per kind of run). */
  readonly build: string
}

/**
 * Where V8's compiled code for this build of mm is kept between runs: under the user's
 * cache directory, one file per checkout (the bundle's path), build (its content hash, size
 * and modification time, so a bundle rebuilt or changed in place never meets old code), Node
 * version and kind of run. Two checkouts of different code never share, nor evict, each other's file.
 */
const cacheFile = (file: string, kind: string): CacheFile | undefined => {
  if (process.env.MM_NO_CODE_CACHE !== undefined || typeof MM_CORE_HASH !== "string") return undefined
  let stamp: string
  try {
    const stat = fs.statSync(file)
    stamp = `${MM_CORE_HASH}-${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}`
  } catch {
    return undefined
  }
  const checkout = `core-${shortHash(file)}-`
  const build = `${checkout}${stamp}-${process.version}-${process.arch}`
  return { file: path.join(userCacheDir(), `${build}-${kind}.v8`), checkout, build }
}

const readCache = (file: string | undefined): Buffer | undefined => {
  if (file === undefined) return undefined
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

const writeCache = (cache: CacheFile, data: Buffer): void => {
  const dir = path.dirname(cache.file)
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const temp = `${cache.file}.${process.pid}.tmp`
    fs.writeFileSync(temp, data, { mode: 0o600 })
    fs.renameSync(temp, cache.file)
    // this checkout's caches of other builds or Node versions are of no use any more (its
    // other kinds of run, of this build, are)
    for (const name of fs.readdirSync(dir)) {
      const earlierFormat = /^core-[0-9a-f]{16}-v/.test(name)
      const otherBuild = name.startsWith(cache.checkout) && !name.startsWith(`${cache.build}-`)
      if ((otherBuild || earlierFormat) && name.endsWith(".v8")) fs.rmSync(path.join(dir, name), { force: true })
    }
  } catch {
    // a cache that cannot be written only costs start-up time
  }
}

/** The core's entry (`Main.main`): the command line, and what to call once start-up is over. */
type Main = (argv: ReadonlyArray<string>, hooks: { readonly startedUp: () => void }) => void

/**
 * Loads `mm-core.cjs` beside this file. Node 20 has no compile cache for modules, so the
 * bundle is compiled as a script with V8's cached data, which skips most of the parsing
 * and compiling on every start after the first.
 */
export const loadCore = (): { main: (argv: ReadonlyArray<string>) => void } => {
  const here = __dirname
  const file = path.join(here, "mm-core.cjs")
  const cache = cacheFile(file, runKind(process.argv))
  const cachedData = readCache(cache?.file)
  // an ASCII bundle (the build says so) is read as latin1, which skips UTF-8 decoding: about
  // 2 ms of every start for a file of 1 MB
  const source = fs.readFileSync(file, typeof MM_CORE_ENCODING === "string" ? MM_CORE_ENCODING : "utf8")
  const wrapper = "(function (exports, require, module, __filename, __dirname) {" + source + "\n})"
  const script = new vm.Script(wrapper, { filename: file, cachedData })
  const module = { exports: {} as { main: Main } }
  script.runInThisContext()(module.exports, require, module, file, here)
  // the first run of a build keeps what it compiled once its start-up is over (lib/StartedUp.ts
  // says when), or at exit for a run that never says so
  let keep = cache !== undefined && (cachedData === undefined || script.cachedDataRejected === true)
  const keepNow = () => {
    if (!keep || cache === undefined) return
    keep = false
    writeCache(cache, script.createCachedData())
  }
  if (keep) process.once("exit", keepNow)
  return { main: (argv) => module.exports.main(argv, { startedUp: keepNow }) }
}
