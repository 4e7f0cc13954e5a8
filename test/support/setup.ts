// Run before every test file (vitest.config.ts).
//
// mm keeps what a model server said of itself under the user's cache directory for a few
// minutes (src/model/chat/ServerCache.ts), and the tests run with that cache on, as a user does.
// Tests start many fake servers, a later one perhaps on a port an earlier one used, so each
// test gets a cache directory of its own ($XDG_CACHE_HOME), shared by the mm processes it starts
// (a second run finds what the first kept) and the layers it builds, and removed after it;
// whatever starts outside a test (a file's beforeAll) shares one for the file. The group of
// tests that covers mm without the cache sets MM_NO_SERVER_CACHE=1 itself.
//
// V8's code cache (src/CoreLoader.ts) lives in the same directory. So that each test's mm does
// not start cold, every test's directory links the code caches found in one shared directory,
// and a code cache an mm wrote in a test's directory is moved to the shared one after it.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, afterEach, beforeEach } from "vitest"

delete process.env.MM_NO_SERVER_CACHE

// A project's own agent.yaml obeys its guarded settings (MCP servers, permissions other than
// ask, a looser sandbox, where the key goes) only once the user trusts it
// (src/config/ProjectTrust.ts). Hundreds of tests write such a file into their project as the
// simplest way to set mm up, and are about something else: every test, and every mm it starts,
// runs as with --trust. The tests of the trust itself take MM_TRUST_PROJECT out of the child's
// environment (test/e2e/cli/ProjectTrust.test.ts) or pass `trust` themselves.
process.env.MM_TRUST_PROJECT = "1"

const shared = path.join(os.tmpdir(), `mm-test-code-cache-${process.getuid?.() ?? "user"}`)

/** The cache homes made and not yet removed. */
const homes = new Set<string>()

/** A cache home of its own, its `mm/` holding links to the shared code caches. */
const makeCacheHome = (): string => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "mm-test-cache-"))
  homes.add(home)
  const dir = path.join(home, "mm")
  fs.mkdirSync(dir, { mode: 0o700 })
  let names: Array<string> = []
  try {
    names = fs.readdirSync(shared).filter((name) => name.endsWith(".v8"))
  } catch {
    // no shared code cache yet
  }
  for (const name of names) fs.symlinkSync(path.join(shared, name), path.join(dir, name))
  return home
}

/** `core-CHECKOUT-BUILD-KIND.v8`: the prefix of the checkout, and that of the build. */
const CODE_CACHE = /^(core-[0-9a-f]+-)(.+)-[a-z]+\.v8$/

/** The code caches an mm wrote under `home` moved to the shared directory (older builds of its checkout dropped there), and `home` removed. */
const dropCacheHome = (home: string): void => {
  const dir = path.join(home, "mm")
  try {
    for (const name of fs.readdirSync(dir)) {
      const parts = CODE_CACHE.exec(name)
      if (parts === null || !fs.lstatSync(path.join(dir, name)).isFile()) continue
      fs.mkdirSync(shared, { recursive: true, mode: 0o700 })
      const temp = path.join(shared, `${name}.${process.pid}.tmp`)
      fs.copyFileSync(path.join(dir, name), temp)
      fs.renameSync(temp, path.join(shared, name))
      const build = `${parts[1]}${parts[2]}-`
      for (const other of fs.readdirSync(shared)) {
        if (other.startsWith(parts[1]) && !other.startsWith(build) && other.endsWith(".v8")) {
          fs.rmSync(path.join(shared, other), { force: true })
        }
      }
    }
  } catch {
    // a code cache not shared only costs the next test's mm its start-up time
  }
  fs.rmSync(home, { recursive: true, force: true })
  homes.delete(home)
}

/**
 * The user's state and configuration directories (remembered approvals, project trust, the
 * user's own agent.yaml: lib/UserState.ts) are a test's own too, under its cache home: no test
 * reads or writes the real ones, and none sees what another remembered.
 */
const useHome = (home: string): void => {
  process.env.XDG_CACHE_HOME = home
  process.env.XDG_STATE_HOME = path.join(home, "state")
  process.env.XDG_CONFIG_HOME = path.join(home, "config")
}

const fileHome = makeCacheHome()
useHome(fileHome)
let testHome: string | undefined

beforeEach(() => {
  testHome = makeCacheHome()
  useHome(testHome)
})

afterEach(() => {
  useHome(fileHome)
  if (testHome !== undefined) dropCacheHome(testHome)
  testHome = undefined
})

// the file's, and a test's whose afterEach did not get this far (another hook of it failed)
afterAll(() => {
  for (const home of [...homes]) dropCacheHome(home)
})

// A test file's worker reports to vitest's main process over an RPC whose every call must be
// answered within 60 s, and the answer is read only when the worker's event loop gets a turn.
// Tests that run synchronously one after another (a table of 500 command lines, each read by
// the bash parser and checked with git) give it none: on a loaded 2-core machine such a file
// passed the 60 s and the run ended with "Timeout calling onTaskUpdate" although every test
// passed. After a test, once a second has gone by without one, the worker gets a turn of its
// event loop (a turn after every test made that file four times slower).
let lastTurn = Date.now()
afterEach(async () => {
  if (Date.now() - lastTurn < 1000) return
  await new Promise<void>((resolve) => setImmediate(resolve))
  lastTurn = Date.now()
})
