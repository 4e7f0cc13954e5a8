/**
 * What of the host a confined command must not reach, worked out from this machine: the
 * environment variables that look like secrets, the directories where the host's sockets live
 * (replaced by empty ones), and the sockets elsewhere that the environment names (covered).
 * tools/Sandbox.ts hands the result to lib/Bubblewrap.ts.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { within } from "../lib/RealPath"

/**
 * Names that commonly hold a credential: a word such as KEY, TOKEN, SECRET or PASSWORD between
 * underscores or at an end (`OPENAI_API_KEY`, `GH_TOKEN`, `GOOGLE_APPLICATION_CREDENTIALS`), a
 * name ending in PASSWORD, PASSWD, `_PWD` or `_PAT` (`PGPASSWORD`, `MYSQL_PWD`, `GITHUB_PAT`),
 * `SSHPASS`, and every `AWS_` variable. `SSH_AUTH_SOCK` matches too: it lends the user's keys.
 */
const SECRET_NAME =
  /(^|_)(API_?KEY|KEYS?|TOKENS?|SECRETS?|PASSWORDS?|PASSWD|PASS|CREDENTIALS?|AUTH)(_|$)|(PASSWORD|PASSWD|_PWD|_PAT)$|^SSHPASS$|^AWS_/i

/** A URL that carries a password (`postgres://user:secret@host/db`), as a `DATABASE_URL` does. */
const CREDENTIAL_URL = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i

/** Whether a variable's name looks like it holds a secret. */
export const looksSecret = (name: string): boolean => SECRET_NAME.test(name)

/**
 * The environment a confined command gets: `env` (mm's own, already without the variables that
 * hold mm's secrets) less every variable whose name looks secret or whose value is a URL with a
 * password in it, unless `allowed` names it.
 */
export const confinedEnv = (
  env: NodeJS.ProcessEnv,
  allowed: ReadonlyArray<string>
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if ((looksSecret(name) || CREDENTIAL_URL.test(value)) && !allowed.includes(name)) continue
    out[name] = value
  }
  return out
}

const isDirectory = (dir: string): boolean => {
  try {
    return fs.lstatSync(dir).isDirectory()
  } catch {
    return false
  }
}

/**
 * The directories replaced by an empty one inside (besides /tmp): /run, /var/run when it is not
 * a link to /run, and $XDG_RUNTIME_DIR where it lies elsewhere. That is where the host's
 * services put their sockets (the D-Bus buses, Docker, systemd, the user's session).
 */
export const hiddenDirs = (env: NodeJS.ProcessEnv): Array<string> => {
  const runtime = env.XDG_RUNTIME_DIR
  const candidates = ["/run", "/var/run", ...(runtime !== undefined && path.isAbsolute(runtime) ? [runtime] : [])]
  const found: Array<string> = []
  for (const dir of candidates) {
    if (!isDirectory(dir) || found.some((d) => within(d, dir)) || within("/tmp", dir)) continue
    found.push(dir)
  }
  return found
}

/** A socket path named by a variable: `unix:///x`, `unix:path=/x,…`, or a plain absolute path. */
const socketPathOf = (value: string | undefined): Array<string> => {
  if (value === undefined) return []
  return value.split(";").flatMap((address) => {
    const docker = /^unix:\/\/(\/.+)$/.exec(address)
    if (docker !== null) return [docker[1]]
    const dbus = /^unix:(?:.*,)?path=([^,]+)/.exec(address)
    if (dbus !== null) return [dbus[1]]
    return path.isAbsolute(address) ? [address] : []
  })
}

const isSocket = (file: string): boolean => {
  try {
    return fs.statSync(file).isSocket()
  } catch {
    return false
  }
}

/** The sockets in `dir` and, `depth` levels down, in its subdirectories (an ssh ControlMaster's, gpg-agent's). */
const socketsIn = (dir: string, depth: number): Array<string> => {
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
  return entries.flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isSocket()) return [file]
    return entry.isDirectory() && depth > 0 ? socketsIn(file, depth - 1) : []
  })
}

/**
 * Sockets outside the hidden directories that would still be reachable: those the environment
 * names (the SSH agent, Docker, the D-Bus buses), Docker's in the home directory, LXD's, and
 * those in `~/.ssh` (ControlMaster connections) and `~/.gnupg` (the agent). Others elsewhere
 * stay reachable: nothing short of a system-call filter would find them all.
 */
export const maskedSockets = (
  env: NodeJS.ProcessEnv,
  hidden: ReadonlyArray<string>,
  home: string = os.homedir()
): Array<string> => {
  const named = ["SSH_AUTH_SOCK", "DOCKER_HOST", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"].flatMap((
    name
  ) => socketPathOf(env[name]))
  const known = [
    path.join(home, ".docker", "run", "docker.sock"),
    path.join(home, ".docker", "desktop", "docker.sock"),
    "/var/snap/lxd/common/lxd/unix.socket",
    ...socketsIn(path.join(home, ".ssh"), 1),
    ...socketsIn(path.join(home, ".gnupg"), 0)
  ]
  const found: Array<string> = []
  for (const socket of [...named, ...known]) {
    if ([...hidden, "/tmp"].some((dir) => within(dir, socket)) || found.includes(socket) || !isSocket(socket)) continue
    found.push(socket)
  }
  return found
}
