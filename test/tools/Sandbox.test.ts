import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"

import { defaultSandbox } from "../../src/config/SandboxConfig"
import { confinedCommand } from "../../src/lib/Bubblewrap"
import { blockedBy, limitLineOf, makeSandbox, sandboxLine, stateOf, writablePath } from "../../src/tools/Sandbox"
import { requireSandbox } from "../support/sandbox"

describe("the sandbox", () => {
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
      "ulimit -H -S -f 2048 2>/dev/null; ulimit -H -S -u 64 2>/dev/null; make"
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
    const run = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], {
      encoding: "utf8"
    })
    expect(run.stderr).toBe("")
    // bwrap's own process and bash count too: fewer than 20 forks, then EAGAIN (11)
    expect(run.stdout).toMatch(/^refused 11\nforked 1\d\n$/)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
