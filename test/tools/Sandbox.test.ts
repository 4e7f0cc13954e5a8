import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"

import { bwrapArgs } from "../../src/lib/Bubblewrap"
import { blockedBy, makeSandbox, sandboxLine, stateOf, writablePath } from "../../src/tools/Sandbox"

describe("the sandbox", () => {
  it("confines with a read-only root, its own /dev, /proc and /tmp, the project writable, no network", () => {
    const args = bwrapArgs(
      { dir: "/work/p", writable: ["/home/me/.cache"], network: false, unset: ["OPENAI_API_KEY"] },
      ["bash", "-c", "make"]
    )
    const joined = args.join(" ")
    expect(joined).toContain("--ro-bind / /")
    expect(joined).toContain("--dev /dev --proc /proc --tmpfs /tmp")
    expect(joined).toContain("--bind-try /home/me/.cache /home/me/.cache")
    // the project is bound after /tmp, so a project under /tmp stays the real one
    expect(joined.indexOf("--bind /work/p /work/p")).toBeGreaterThan(joined.indexOf("--tmpfs /tmp"))
    expect(joined).toContain("--chdir /work/p")
    expect(args).toContain("--unshare-net")
    expect(args).toContain("--die-with-parent")
    expect(joined).toContain("--unsetenv OPENAI_API_KEY")
    expect(args.slice(-4)).toEqual(["--", "bash", "-c", "make"])
    expect(bwrapArgs({ dir: "/p", writable: [], network: true, unset: [] }, ["true"])).not.toContain("--unshare-net")
  })

  it("tells a blocked write or connection from an ordinary failure", () => {
    expect(blockedBy("touch: cannot touch '/etc/x': Read-only file system", false)).toContain("write outside")
    expect(blockedBy("OSError: [Errno 30] EROFS", true)).toContain("write outside")
    expect(blockedBy("curl: (6) Could not resolve host: example.com", false)).toContain("network")
    expect(blockedBy("bash: connect: Connection refused", false)).toContain("network")
    expect(blockedBy("npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org", false)).toContain("network")
    // with the network allowed, a refused connection is the server's doing
    expect(blockedBy("bash: connect: Connection refused", true)).toBeUndefined()
    expect(blockedBy("make: *** [all] Error 2", false)).toBeUndefined()
  })

  it("sandbox.writable: ~/ is the home directory, a relative path is in the project", () => {
    expect(writablePath("/work/p", "~/.cache")).toBe(path.join(os.homedir(), ".cache"))
    expect(writablePath("/work/p", "build")).toBe("/work/p/build")
    expect(writablePath("/work/p", "/opt/out")).toBe("/opt/out")
  })

  it("says its state in one line", () => {
    expect(sandboxLine(stateOf({ mode: "auto", network: false, writable: [] }, { ok: true }))).toBe(
      "sandbox: on — bash writes only the project, no network"
    )
    expect(sandboxLine(stateOf({ mode: "on", network: true, writable: ["~/.cache"] }, { ok: true }))).toBe(
      "sandbox: on — bash writes only the project and ~/.cache, network allowed"
    )
    expect(sandboxLine(stateOf({ mode: "off", network: false, writable: [] }, undefined))).toBe(
      "sandbox: off (set in agent.yaml)"
    )
    expect(
      sandboxLine(
        stateOf({ mode: "auto", network: false, writable: [] }, {
          ok: false,
          reason: "bubblewrap not found — apt-get install bubblewrap"
        })
      )
    ).toBe("sandbox: off (bubblewrap not found — apt-get install bubblewrap)")
  })

  it("off: nothing is tried and nothing is confined", async () => {
    const sandbox = makeSandbox({ mode: "off", network: false, writable: [] }, () => [])
    expect(sandbox.known()).toEqual({ _tag: "Off", reason: "set in agent.yaml" })
    const state = await Effect.runPromise(sandbox.state)
    expect(sandbox.confine(state, "/p")).toBeUndefined()
  })
})
