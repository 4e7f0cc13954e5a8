import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"

import { defaultSandbox } from "../../src/config/SandboxConfig"
import { confinedCommand } from "../../src/lib/Bubblewrap"
import { gitBranch, gitDirty } from "../../src/lib/Git"
import { blockedBy, limitLineOf, makeSandbox, sandboxLine, stateOf, writablePath } from "../../src/tools/Sandbox"
import { confinedEnv, maskedSockets } from "../../src/tools/SandboxHost"
import { requireSandbox } from "../support/sandbox"

const CLOSE_FDS_WORDS =
  "for f in /proc/self/fd/*; do n=${f##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\" 2>/dev/null; done; "

const confinement = {
  dir: "/work/p",
  writable: ["/home/me/.cache"],
  readOnly: ["/work/p/.git", "/work/p/.mm"],
  hidden: ["/run"],
  masked: ["/home/me/.docker/run/docker.sock"],
  network: false,
  limits: { processes: 64, fileSizeMiB: 2 },
  userNamespace: false
}

describe("the sandbox", () => {
  it("confines with a read-only root, its own /dev, /proc, /tmp and /run, the project writable, no network", () => {
    const args = confinedCommand("bwrap", confinement, ["bash", "-c", "make"])
    const joined = args.join(" ")
    expect(args[0]).toBe("bwrap")
    expect(joined).toContain("--ro-bind / /")
    expect(joined).toContain("--dev /dev --proc /proc --tmpfs /tmp --tmpfs /run")
    expect(joined).toContain("--ro-bind /dev/null /home/me/.docker/run/docker.sock")
    expect(joined).toContain("--bind-try /home/me/.cache /home/me/.cache")
    // the project is bound after /tmp, so a project under /tmp stays the real one
    expect(joined.indexOf("--bind /work/p /work/p")).toBeGreaterThan(joined.indexOf("--tmpfs /tmp"))
    // .git and .mm are put back read-only after the project, so nothing loosens them
    expect(joined.indexOf("--ro-bind /work/p/.git /work/p/.git")).toBeGreaterThan(
      joined.indexOf("--bind /work/p /work/p")
    )
    expect(joined).toContain("--ro-bind /work/p/.mm /work/p/.mm")
    expect(joined).toContain("--chdir /work/p")
    for (const flag of ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net"]) {
      expect(args).toContain(flag)
    }
    expect(joined).toContain("--cap-drop ALL --new-session --die-with-parent")
    expect(args).not.toContain("--unshare-user")
    // the limits are set on the script's first line, so its line numbers stay the same
    expect(args.slice(-3)).toEqual([
      "bash",
      "-c",
      `ulimit -H -S -f 2048 2>/dev/null; ulimit -H -S -u 64 2>/dev/null; ${CLOSE_FDS_WORDS}make`
    ])
    expect(confinedCommand("bwrap", { ...confinement, network: true }, ["bash", "-c", "true"])).not.toContain(
      "--unshare-net"
    )
    expect(confinedCommand("bwrap", { ...confinement, userNamespace: true }, ["bash", "-c", "true"])).toContain(
      "--unshare-user"
    )
    // only a shell command line can be confined: its script sets the limits
    expect(() => confinedCommand("bwrap", confinement, ["make", "-j2"])).toThrow(/not a shell command line/)
  })

  it("gives the reason for a block in its own words, once it has checked it", () => {
    const view = { cwd: "/work/p", network: false, writable: ["/home/me/.cache"] }
    expect(blockedBy("touch: cannot touch '/etc/x': Read-only file system", view)).toBe(
      "/etc/x is read-only in the sandbox: it is outside the project"
    )
    expect(blockedBy("mkdir: cannot create directory ‘/opt/y’: Read-only file system", view)).toBe(
      "/opt/y is read-only in the sandbox: it is outside the project"
    )
    expect(blockedBy("bash: .git/config: Read-only file system", view)).toMatch(
      /^\/work\/p\/\.git\/config is read-only in the sandbox: it is in \.git\//
    )
    // a path the sandbox lets be written is not taken as the reason
    expect(blockedBy("cannot write '/work/p/src/a.ts': Read-only file system", view)).toBe(
      "a write failed on a read-only file system: outside the project, the sandbox lets nothing be written"
    )
    expect(blockedBy("OSError: [Errno 30] EROFS", { ...view, network: true })).toContain("read-only file system")
    const network = "the network is off in the sandbox (sandbox.network: false)"
    expect(blockedBy("curl: (6) Could not resolve host: example.com", view)).toBe(network)
    expect(blockedBy("bash: connect: Connection refused", view)).toBe(network)
    expect(blockedBy("npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org", view)).toBe(network)
    // with the network allowed, a refused connection is the server's doing
    expect(blockedBy("bash: connect: Connection refused", { ...view, network: true })).toBeUndefined()
    expect(blockedBy("make: *** [all] Error 2", view)).toBeUndefined()
  })

  it("says which limit stopped a call", () => {
    const limits = { processes: 64, fileSize: 2 }
    expect(limitLineOf({ output: "exit code 153\nFile size limit exceeded", failed: true }, limits, false)).toBe(
      "[sandbox: a file reached the limit of 2 MiB a call may write (sandbox.limits.fileSize)]"
    )
    expect(limitLineOf({ output: "exit code 0\nok", failed: false }, limits, true)).toBe(
      "[sandbox: the call reached its limit of 64 processes at once (sandbox.limits.processes)]"
    )
    expect(
      limitLineOf(
        { output: "exit code 254\nbash: fork: retry: Resource temporarily unavailable", failed: true },
        limits,
        false
      )
    ).toContain("limit of 64 processes")
    expect(limitLineOf({ output: "exit code 1\n", failed: true }, limits, false)).toBeUndefined()
    expect(limitLineOf({ output: "Error: spawn EAGAIN", failed: true }, limits, false)).toBeUndefined()
    expect(limitLineOf({ output: "Error: EAGAIN,\tspawn sh", failed: true }, limits, false)).toContain("64 processes")
    expect(limitLineOf({ output: "EAGAINfork\nEAGAIN\nfork", failed: true }, limits, false)).toBeUndefined()
  })

  // a line of 140,000 EAGAINs (when sandbox.maxOutput is raised) took a regular expression
  // minutes: it was tried from each of them to the end of the line
  it("reads a megabyte line of EAGAINs at once", () => {
    const limits = { processes: 64, fileSize: 2 }
    const line = "EAGAIN ".repeat(140_000)
    expect(limitLineOf({ output: `exit code 1\n${line}`, failed: true }, limits, false)).toBeUndefined()
    expect(limitLineOf({ output: `exit code 1\n${line}fork`, failed: true }, limits, false)).toContain("64 processes")
  })

  it("sandbox.writable: ~/ is the home directory, a relative path is in the project", () => {
    expect(writablePath("/work/p", "~/.cache")).toBe(path.join(os.homedir(), ".cache"))
    expect(writablePath("/work/p", "build")).toBe("/work/p/build")
    expect(writablePath("/work/p", "/opt/out")).toBe("/opt/out")
  })

  it("says its state in one line", () => {
    expect(sandboxLine(stateOf({ ...defaultSandbox, mode: "auto" }, { ok: true }))).toBe(
      "sandbox: on — bash writes only the project, no network"
    )
    expect(sandboxLine(stateOf({ ...defaultSandbox, mode: "on", network: true, writable: ["~/.cache"] }, { ok: true })))
      .toBe(
        "sandbox: on — bash writes only the project and ~/.cache, network allowed"
      )
    expect(sandboxLine(stateOf({ ...defaultSandbox, mode: "off" }, undefined))).toBe(
      "sandbox: off (set in agent.yaml)"
    )
    expect(
      sandboxLine(
        stateOf({ ...defaultSandbox, mode: "auto" }, {
          ok: false,
          reason: "bubblewrap not found — apt-get install bubblewrap"
        })
      )
    ).toBe("sandbox: off (bubblewrap not found — apt-get install bubblewrap)")
  })

  it("off: nothing is tried and nothing is confined", async () => {
    const sandbox = makeSandbox({ ...defaultSandbox, mode: "off" }, () => ({}))
    expect(sandbox.known()).toEqual({ _tag: "Off", reason: "set in agent.yaml" })
    const state = await Effect.runPromise(sandbox.state)
    expect(sandbox.confine(state, "/p")).toBeUndefined()
  })
})

describe("the process limit for a user other than root", () => {
  // As root, RLIMIT_NPROC does not apply and mm uses a pids control group (the e2e tests, as
  // root, cover that); here the limit is tried as `nobody`, in a user namespace of its own.
  const asNobody = process.getuid?.() === 0 && spawnSync("setpriv", ["--help"]).status === 0
  it.skipIf(!asNobody)("stops a call's forks at the limit, whatever else the user runs", () => {
    requireSandbox()
    const dir = fs.mkdtempSync("/var/tmp/mm-limit-")
    fs.chmodSync(dir, 0o777)
    const forks = [
      "import os, time",
      "n = 0",
      "for i in range(60):",
      "    try:",
      "        if os.fork() == 0:",
      "            time.sleep(5)",
      "            os._exit(0)",
      "        n += 1",
      "    except OSError as e:",
      "        print('refused', e.errno)",
      "        break",
      "print('forked', n)"
    ].join("\n")
    const argv = confinedCommand(
      "bwrap",
      {
        dir,
        writable: [],
        readOnly: [],
        hidden: [],
        masked: [],
        network: false,
        limits: { processes: 20, fileSizeMiB: 1 },
        userNamespace: true
      },
      ["bash", "-c", `python3 -c "${forks}"`]
    )
    // stdin not a socket: bash run with one (and SHLVL unset) reads ~/.bashrc, as if from sshd
    const run = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    })
    expect(run.stderr).toBe("")
    // bwrap's own process and bash count too: fewer than 20 forks, then EAGAIN (11)
    expect(run.stdout).toMatch(/^refused 11\nforked 1\d\n$/)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})

describe("mm's own git, run in the sandbox with nothing writable", () => {
  const sandbox = makeSandbox({ ...defaultSandbox, mode: "on" }, () => process.env)
  const repository = (): string => {
    const root = fs.realpathSync(fs.mkdtempSync("/var/tmp/mm-git-ro-"))
    const git = (...args: Array<string>) =>
      spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, stdio: "ignore" })
    git("init", "-q")
    fs.writeFileSync(path.join(root, "a.txt"), "a\n")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    return root
  }

  it("can change nothing, in the project or out of it, and still tells a clean tree from a dirty one", async () => {
    requireSandbox()
    const root = repository()
    const state = await Effect.runPromise(sandbox.state)
    const confine = sandbox.readOnly(state, root)
    if (confine === undefined) throw new Error("the sandbox is off")
    const outside = fs.mkdtempSync("/var/tmp/mm-git-ro-out-")
    const tried = confine(["sh", "-c", `touch inside; touch ${outside}/x; touch .git/x; echo done`])
    const run = spawnSync(tried.argv[0], tried.argv.slice(1), { cwd: root, env: tried.env, encoding: "utf8" })
    expect(run.stdout).toBe("done\n")
    expect(run.stderr.match(/Read-only file system/g)).toHaveLength(3)
    expect([fs.existsSync(path.join(root, "inside")), fs.existsSync(path.join(outside, "x"))]).toEqual([false, false])

    expect(await gitDirty(root, confine)).toBe(false)
    fs.writeFileSync(path.join(root, "b.txt"), "new\n")
    expect(await gitDirty(root, confine)).toBe(true)
  })

  it("a FIFO where .git or HEAD should be is not read: the branch is unknown, and nothing waits", () => {
    const root = repository()
    fs.rmSync(path.join(root, ".git", "HEAD"))
    spawnSync("mkfifo", [path.join(root, ".git", "HEAD")])
    expect(gitBranch(root)).toBeUndefined()
    const other = fs.realpathSync(fs.mkdtempSync("/var/tmp/mm-git-fifo-"))
    spawnSync("mkfifo", [path.join(other, ".git")])
    expect(gitBranch(other)).toBeUndefined()
  })
})

describe("what of the host the sandbox keeps out", () => {
  it("secret-looking names and URLs with a password are left out, unless sandbox.env names them", () => {
    const env = {
      PATH: "/usr/bin",
      HOME: "/home/me",
      PWD: "/work/p",
      OLDPWD: "/work",
      PGPASSWORD: "pg",
      MYSQL_PWD: "my",
      SSHPASS: "ssh",
      GITHUB_PAT: "pat",
      OPENAI_API_KEY: "sk",
      AWS_PROFILE: "prod",
      SSH_AUTH_SOCK: "/tmp/agent",
      DATABASE_URL: "postgres://app:secret@db/app",
      PUBLIC_URL: "https://example.com/x",
      KEYBOARD_LAYOUT: "us",
      MY_TOKEN: "let-through"
    }
    expect(Object.keys(confinedEnv(env, ["MY_TOKEN"])).sort()).toEqual(
      ["HOME", "KEYBOARD_LAYOUT", "MY_TOKEN", "OLDPWD", "PATH", "PUBLIC_URL", "PWD"]
    )
  })

  it("sockets in ~/.ssh and ~/.gnupg are covered, and the covers come after the project's bind", async () => {
    const home = fs.realpathSync(fs.mkdtempSync("/var/tmp/mm-home-"))
    fs.mkdirSync(path.join(home, ".ssh", "sockets"), { recursive: true })
    fs.mkdirSync(path.join(home, ".gnupg"))
    const sockets = [path.join(home, ".ssh", "sockets", "cm-git@host:22"), path.join(home, ".gnupg", "S.gpg-agent")]
    const servers = await Promise.all(sockets.map((socket) =>
      new Promise<net.Server>((listening) => {
        const server = net.createServer().listen(socket, () => listening(server))
      })
    ))
    const masked = maskedSockets({}, ["/run"], home)
    expect([...masked].sort()).toEqual([...sockets].sort())
    const args = confinedCommand("bwrap", { ...confinement, dir: home, masked }, ["bash", "-c", "true"]).join(" ")
    expect(args.indexOf(`--ro-bind /dev/null ${masked[0]}`)).toBeGreaterThan(args.indexOf(`--bind ${home} ${home}`))
    for (const server of servers) server.close()
  })

  it("a descriptor mm was started with is closed before the command runs", () => {
    requireSandbox()
    const dir = fs.realpathSync(fs.mkdtempSync("/var/tmp/mm-fd-"))
    const file = path.join(dir, "host-file")
    fs.writeFileSync(file, "")
    const fd = fs.openSync(file, "a")
    const argv = confinedCommand("bwrap", { ...confinement, dir, readOnly: [], masked: [], hidden: [] }, [
      "bash",
      "-c",
      "echo leaked >&7 && echo wrote || echo closed"
    ])
    const run = spawnSync(argv[0], argv.slice(1), {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe", "ignore", "ignore", "ignore", "ignore", fd]
    })
    fs.closeSync(fd)
    expect(run.stdout).toBe("closed\n")
    expect(fs.readFileSync(file, "utf8")).toBe("")
  })
})
