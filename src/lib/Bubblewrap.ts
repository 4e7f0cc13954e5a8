/**
 * bubblewrap (`bwrap`): whether it can start on this machine, and the command line that
 * confines a program with it. Knows nothing of mm; src/tools/Sandbox.ts decides when to use it.
 */
import { nodeChildProcesses } from "./NodeModules"
import { programPath } from "./Programs"

const BWRAP = "bwrap"

/** Whether bwrap can start here; when not, why, in words that say what to do. */
type BwrapProbe = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/** What a confined program may do beyond reading the system and writing `dir`. */
export interface Confinement {
  /** The directory it may write (the project); it starts there. */
  readonly dir: string
  /** Other paths it may write, absolute (missing ones are left out). */
  readonly writable: ReadonlyArray<string>
  /** Paths inside `dir` it may only read, absolute and existing (bound read-only last, so nothing loosens them). */
  readonly readOnly: ReadonlyArray<string>
  /** Directories replaced by an empty one of its own (where the host's sockets live: /run, …). */
  readonly hidden: ReadonlyArray<string>
  /** Socket files elsewhere covered by /dev/null, so that nothing can connect to them. */
  readonly masked: ReadonlyArray<string>
  readonly network: boolean
  /** Per call: the most processes (and threads) it may run at once, and the largest file it may write. */
  readonly limits: { readonly processes: number; readonly fileSizeMiB: number }
  /** Whether it starts in a user namespace of its own (where the process limit counts its own processes only). */
  readonly userNamespace: boolean
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

/** Fresh namespaces for everything but the mounts' view and the network: its own processes, IPC, host name. */
const OWN_NAMESPACES = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]

/** The shell words that set the limits (soft and hard, so that nothing inside can raise them again). */
/**
 * Closes every descriptor above 2 that the command would inherit: bwrap passes on whatever mm
 * was started with (a make jobserver's, one a wrapper left open on a file of the host's), and
 * writing through one would reach outside the sandbox.
 */
const CLOSE_FDS = "for f in /proc/self/fd/*; do n=${f##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\" 2>/dev/null; done; "

const limitWords = (limits: Confinement["limits"]): string =>
  `ulimit -H -S -f ${
    limits.fileSizeMiB * 1024
  } 2>/dev/null; ulimit -H -S -u ${limits.processes} 2>/dev/null; ${CLOSE_FDS}`

/**
 * A shell command line (`SHELL -c SCRIPT …`, the shell bash) with the limits set at the start
 * of its script, on its first line, so that line numbers in its messages stay the same. The
 * file size is in 1 KiB blocks, as `ulimit -f` counts.
 */
const withLimits = (limits: Confinement["limits"], argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (argv[1] !== "-c" || argv.length < 3) throw new Error(`not a shell command line: ${argv.join(" ")}`)
  return [argv[0], "-c", limitWords(limits) + argv[2], ...argv.slice(3)]
}

/**
 * The command line that puts `argv` under bwrap: the root read-only; `/dev`, `/proc`, `/tmp`
 * and the `hidden` directories of its own; `dir` (and `writable`) writable; `readOnly` and
 * `masked` put back read-only; its own process, IPC and host-name namespaces; no network
 * unless allowed; no capabilities; a new session (no terminal to inject keys into); killed
 * with the process that started it. Its environment is the caller's to give: whatever bwrap
 * is started with, its own process inside holds too.
 */
const viewArgs = (confinement: Confinement, projectWritable: boolean): Array<string> => [
  ...SYSTEM_VIEW,
  ...confinement.hidden.flatMap((dir) => ["--tmpfs", dir]),
  ...(projectWritable ? confinement.writable.flatMap((p) => ["--bind-try", p, p]) : []),
  projectWritable ? "--bind" : "--ro-bind",
  confinement.dir,
  confinement.dir,
  ...confinement.readOnly.flatMap((p) => ["--ro-bind", p, p]),
  // last, so that neither the project nor a writable path brings a covered socket back
  ...confinement.masked.flatMap((socket) => ["--ro-bind", "/dev/null", socket]),
  "--chdir",
  confinement.dir,
  ...OWN_NAMESPACES,
  ...(confinement.userNamespace ? ["--unshare-user"] : []),
  ...(confinement.network ? [] : ["--unshare-net"]),
  "--cap-drop",
  "ALL",
  "--new-session",
  "--die-with-parent"
]

/** The model's command confined: `argv` must be a bash command line, `bash -c SCRIPT …`, whose script sets the limits first. */
export const confinedCommand = (
  program: string,
  confinement: Confinement,
  argv: ReadonlyArray<string>
): Array<string> => [program, ...viewArgs(confinement, true), "--", ...withLimits(confinement.limits, argv)]

/**
 * Any program (mm's own `git status`) confined with nothing writable at all, the project
 * included, and no network: whatever a repository makes it run can change nothing.
 */
export const readOnlyCommand = (
  program: string,
  confinement: Confinement,
  argv: ReadonlyArray<string>
): Array<string> => [program, ...viewArgs({ ...confinement, network: false }, false), "--", ...argv]

const probeArgs = [
  ...SYSTEM_VIEW,
  ...OWN_NAMESPACES,
  "--unshare-net",
  "--cap-drop",
  "ALL",
  "--new-session",
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

/**
 * The program run as bwrap: `MM_BWRAP` when set (tests use a missing one), else `bwrap` from
 * PATH, never from a directory inside `avoid` (the project: a command could have put a `bwrap`
 * of its own there, lib/Programs.ts).
 */
export const bwrapProgram = (avoid: ReadonlyArray<string> = [process.cwd()]): string => {
  const chosen = process.env.MM_BWRAP
  return chosen !== undefined && chosen !== "" ? chosen : programPath(BWRAP, avoid)
}
