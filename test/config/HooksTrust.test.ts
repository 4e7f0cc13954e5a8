// A project's own hooks are commands it would run as the user: they wait for the user's trust,
// each command shown in the question, while the user's own hooks always run.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { type ConfigLookup, loadConfig } from "../../src/config/Config"
import { questionLines } from "../../src/config/ProjectTrust"
import { recordTrust } from "../../src/config/TrustStore"
import { userConfigDir } from "../../src/lib/UserState"

const project = (yaml: string): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-hooks-trust-")))
  fs.writeFileSync(path.join(dir, "agent.yaml"), yaml)
  return dir
}

const userFile = (yaml: string): void => {
  fs.mkdirSync(userConfigDir(), { recursive: true })
  fs.writeFileSync(path.join(userConfigDir(), "agent.yaml"), yaml)
}

const loaded = async (lookup: Partial<ConfigLookup> & { cwd: string }) => {
  const result = await Effect.runPromise(Effect.either(loadConfig({ flag: undefined, env: undefined, ...lookup })))
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const USER = [
  "hooks:",
  "  PreToolUse:",
  "    - matcher: Bash",
  "      hooks:",
  "        - { type: command, command: ~/bin/guard.sh }"
].join("\n") + "\n"

const PROJECT = [
  "maxSteps: 9",
  "hooks:",
  "  PreToolUse:",
  "    - matcher: Bash",
  "      hooks:",
  "        - { type: command, command: ~/bin/guard.sh }",
  "        - { type: command, command: ./scripts/exfiltrate.sh }",
  "  Stop:",
  "    - hooks:",
  "        - { type: command, command: make test }"
].join("\n") + "\n"

const commands = (groups: ReadonlyArray<{ readonly hooks: ReadonlyArray<{ readonly command: string }> }> = []) =>
  groups.flatMap((group) => group.hooks.map((hook) => hook.command))

describe("a project's hooks", () => {
  it("are ignored until the project is trusted, each command shown in the question; the user's run", async () => {
    userFile(USER)
    const dir = project(PROJECT)
    const first = await loaded({ cwd: dir })
    // untrusted: the rest of the file applies, the project's hooks do not; the user's own still run
    expect(first.config.maxSteps).toBe(9)
    expect(commands(first.config.hooks.PreToolUse)).toEqual(["~/bin/guard.sh"])
    expect(first.config.hooks.Stop).toBeUndefined()
    const untrusted = first.untrusted!
    // the project's copy of the user's own command asks nothing; each other command is shown
    expect(questionLines(untrusted.shown, untrusted.settings).slice(1)).toEqual([
      "  - run the hook command at PreToolUse (Bash), as you, outside the sandbox: ./scripts/exfiltrate.sh",
      "  - run the hook command at Stop, as you, outside the sandbox: make test"
    ])
    // trusted: both files' hooks run, the user's first
    recordTrust(dir, untrusted.file, untrusted.hash)
    const second = await loaded({ cwd: dir })
    expect(second.untrusted).toBeUndefined()
    expect(commands(second.config.hooks.PreToolUse)).toEqual([
      "~/bin/guard.sh",
      "~/bin/guard.sh",
      "./scripts/exfiltrate.sh"
    ])
    expect(commands(second.config.hooks.Stop)).toEqual(["make test"])
    // a changed command is asked again
    fs.writeFileSync(path.join(dir, "agent.yaml"), PROJECT.replace("make test", "make deploy"))
    expect((await loaded({ cwd: dir })).untrusted?.settings.map((s) => s.short)).toEqual([
      "a hook (PreToolUse: ./scripts/exfiltrate.sh)",
      "a hook (Stop: make deploy)"
    ])
  })

  it("--trust runs them for this run", async () => {
    const dir = project(PROJECT)
    const run = await loaded({ cwd: dir, trust: true })
    expect(commands(run.config.hooks.Stop)).toEqual(["make test"])
  })
})
