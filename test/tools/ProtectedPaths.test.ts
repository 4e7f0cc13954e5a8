// The project's protected paths (.git/, .mm/, agent.yaml) as the file tools' writes see them:
// found on the real path (links followed, `..` resolved), matched by whole names, and counted as
// a write outside the project with the reason the question shows.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { existingProtected, protectedReason, writeTarget } from "../../src/tools/ProtectedPaths"

const GIT = "it is in .git/, where a line of config can make git run a program"
const MM = "it is in .mm/, mm's own records of this project"
const YAML = "it is the project's agent.yaml, which says what mm may run"

/** A project with a .git/config, a .mm/permissions.json and an agent.yaml, and a few lookalikes. */
const project = (): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-protected-")))
  fs.mkdirSync(path.join(dir, ".git", "hooks"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".git", "config"), "[core]\n")
  fs.mkdirSync(path.join(dir, ".mm"))
  fs.writeFileSync(path.join(dir, ".mm", "permissions.json"), "{}")
  fs.writeFileSync(path.join(dir, "agent.yaml"), "permissions: ask\n")
  fs.mkdirSync(path.join(dir, "sub"))
  return dir
}

describe("writeTarget: a protected path counts as outside the project", () => {
  it("each protected path and what lies under it, existing or not, with its reason", () => {
    const dir = project()
    const cases: Array<[string, string]> = [
      [".git/config", GIT],
      [".git", GIT],
      [".git/hooks/pre-commit", GIT],
      [".git/info/new/deep", GIT],
      [".mm/permissions.json", MM],
      [".mm/sessions/x.json", MM],
      ["agent.yaml", YAML],
      [path.join(dir, ".git/config"), GIT],
      ["sub/../.git/config", GIT],
      ["./.mm//permissions.json", MM]
    ]
    for (const [file, why] of cases) {
      expect(writeTarget(dir, file), file).toEqual({
        _tag: "Outside",
        real: path.resolve(dir, file),
        why,
        protectedPath: true
      })
    }
  })

  it("a link inside the project that leads into one is caught on its real path, dangling or not", () => {
    const dir = project()
    fs.symlinkSync(".git/config", path.join(dir, "cfg"))
    fs.symlinkSync(".git", path.join(dir, "g"))
    fs.symlinkSync("../.mm/not-yet.json", path.join(dir, "sub", "dangling"))
    fs.symlinkSync(path.join(dir, "agent.yaml"), path.join(dir, "sub", "conf"))
    expect(writeTarget(dir, "cfg")).toEqual({
      _tag: "Outside",
      real: path.join(dir, ".git/config"),
      why: GIT,
      protectedPath: true
    })
    expect(writeTarget(dir, "g/hooks/post-checkout")).toMatchObject({
      real: path.join(dir, ".git/hooks/post-checkout"),
      why: GIT
    })
    expect(writeTarget(dir, "sub/dangling")).toMatchObject({ real: path.join(dir, ".mm/not-yet.json"), why: MM })
    expect(writeTarget(dir, "sub/conf")).toMatchObject({ real: path.join(dir, "agent.yaml"), why: YAML })
  })

  it("lookalike names are not protected: names are whole and their case counts on this file system", () => {
    const dir = project()
    fs.mkdirSync(path.join(dir, ".GIT"))
    for (
      const file of [
        ".gitignore",
        ".github/workflows/ci.yml",
        ".mm-notes",
        ".git-blame-ignore-revs",
        "agent.yaml.bak",
        "my-agent.yaml",
        ".GIT/config",
        "sub/.git/config",
        "sub/agent.yaml",
        "sub/.mm/x"
      ]
    ) {
      expect(writeTarget(dir, file), file).toEqual({ _tag: "Inside", real: path.join(dir, file) })
    }
  })

  it("outside the project stays outside, with its own reason", () => {
    const dir = project()
    expect(writeTarget(dir, "../elsewhere/.git/config")).toMatchObject({ _tag: "Outside", protectedPath: false })
    expect(writeTarget(dir, "/etc/hosts")).toEqual({
      _tag: "Outside",
      real: "/etc/hosts",
      why: "it now leads outside the project: /etc/hosts",
      protectedPath: false
    })
  })

  it("a name that differs only in case counts when it is the protected file itself (a case-blind file system)", () => {
    const dir = project()
    // a hard link stands in for what a case-blind file system does: two names, one file
    fs.linkSync(path.join(dir, "agent.yaml"), path.join(dir, "AGENT.YAML"))
    expect(protectedReason(dir, path.join(dir, "AGENT.YAML"))).toBe(YAML)
    fs.writeFileSync(path.join(dir, "Agent.Yaml"), "another file")
    expect(protectedReason(dir, path.join(dir, "Agent.Yaml"))).toBeUndefined()
  })
})

describe("mm's own directories of the user, when the project holds them (mm run in the home directory)", () => {
  it("the entries holding them are protected, made first when missing, and writes there count as outside", () => {
    const home = project()
    const saved = { config: process.env.XDG_CONFIG_HOME, state: process.env.XDG_STATE_HOME }
    process.env.XDG_CONFIG_HOME = path.join(home, ".config")
    process.env.XDG_STATE_HOME = path.join(home, ".local", "state")
    try {
      const config = path.join(home, ".config", "mm", "agent.yaml")
      expect(protectedReason(home, config)).toBe(
        `it is in ${path.join(home, ".config")}, which holds your own configuration of mm`
      )
      expect(writeTarget(home, ".local/state/mm/projects/x/permissions.json")).toMatchObject({
        _tag: "Outside",
        protectedPath: true
      })
      // the whole entry, so that a command cannot rename it away and make another
      expect(protectedReason(home, path.join(home, ".config", "other", "x"))).toBeDefined()
      expect(protectedReason(home, path.join(home, "src", "a.ts"))).toBeUndefined()
      const bound = existingProtected(home)
      expect(bound).toContain(path.join(home, ".config"))
      expect(bound).toContain(path.join(home, ".local"))
      expect(fs.statSync(path.join(home, ".config", "mm")).isDirectory()).toBe(true)
    } finally {
      process.env.XDG_CONFIG_HOME = saved.config
      process.env.XDG_STATE_HOME = saved.state
    }
  })

  it("elsewhere (the usual case) they add nothing", () => {
    const dir = project()
    expect(existingProtected(dir).map((p) => path.relative(dir, p)).sort()).toEqual([".git", ".mm", "agent.yaml"])
  })
})
