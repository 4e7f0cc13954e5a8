/**
 * bubblewrap (`bwrap`): whether it can start on this machine, and the command line that
 * confines a program with it. Knows nothing of mm; src/tools/Sandbox.ts decides when to use it.
 */
import { nodeChildProcesses } from "./NodeModules"

const BWRAP = "bwrap"

/** Whether bwrap can start here; when not, why, in words that say what to do. */
type BwrapProbe = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/** What a confined program may do beyond reading the system and writing `dir`. */
interface Confinement {
  /** The directory it may write (the project); it starts there. */
  readonly dir: string
  /** Other paths it may write, absolute (missing ones are left out). */
  readonly writable: ReadonlyArray<string>
  readonly network: boolean
  /** Environment variables removed inside, whoever starts bwrap. */
  readonly unset: ReadonlyArray<string>
}

/** What every confined program sees: the system read-only, and its own `/dev`, `/proc` and `/tmp`. */
const SYSTEM_VIEW = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp"
]

/**
 * The arguments that put `argv` under bwrap: the root read-only, `/dev`, `/proc` and `/tmp` of
 * its own, `dir` (and `writable`) writable, no network unless allowed, and killed with the process
 * that started it. Process ids stay the system's, so that the caller's process-group handling
 * reaches every process inside (bwrap leads the group).
 */
export const bwrapArgs = (confinement: Confinement, argv: ReadonlyArray<string>): Array<string> => [
  ...SYSTEM_VIEW,
  ...confinement.writable.flatMap((p) => ["--bind-try", p, p]),
  "--bind",
  confinement.dir,
  confinement.dir,
  "--chdir",
  confinement.dir,
  ...(confinement.network ? [] : ["--unshare-net"]),
  "--die-with-parent",
  ...confinement.unset.flatMap((name) => ["--unsetenv", name]),
  "--",
  ...argv
]

const probeArgs = [
  ...SYSTEM_VIEW,
  "--unshare-net",
  "--die-with-parent",
  "true"
]

let probed: Promise<BwrapProbe> | undefined

/**
 * Starts `bwrap … true` once per run (asynchronously: nothing waits for it until it is asked)
 * and says whether it worked. `MM_BWRAP` names another program, for tests of a machine without it.
 */
export const probeBwrap = (): Promise<BwrapProbe> => (probed ??= new Promise<BwrapProbe>((resolve) => {
  let stderr = ""
  try {
    const child = nodeChildProcesses().spawn(bwrapProgram(), probeArgs, { stdio: ["ignore", "ignore", "pipe"] })
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8")
    })
    child.on("error", (error: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        reason: error.code === "ENOENT"
          ? "bubblewrap not found — apt-get install bubblewrap"
          : `bubblewrap cannot start: ${error.message}`
      }))
    child.on("close", (code, signal) =>
      resolve(
        code === 0
          ? { ok: true }
          : {
            ok: false,
            reason: `bubblewrap cannot start here: ${
              stderr.trim().split("\n")[0]?.replace(/^bwrap: /, "") || `exit ${code ?? signal}`
            }`
          }
      ))
  } catch (cause) {
    resolve({ ok: false, reason: `bubblewrap cannot start: ${(cause as Error).message}` })
  }
}))

/** The program run as bwrap: `MM_BWRAP` when set (tests use a missing one), else `bwrap` from PATH. */
export const bwrapProgram = (): string => {
  const chosen = process.env.MM_BWRAP
  return chosen !== undefined && chosen !== "" ? chosen : BWRAP
}
