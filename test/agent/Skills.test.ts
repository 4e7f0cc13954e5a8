import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { parseSkillFile } from "../../src/agent/SkillFile"
import { loadSkills, skillsPrompt } from "../../src/agent/Skills"
import { tempDir } from "../support/processes"

const writeSkill = (dir: string, folder: string, text: string): string => {
  const file = path.join(dir, folder, "SKILL.md")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

const skillText = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nDo the thing.\n`

describe("loadSkills", () => {
  it.effect("finds a skill in .mm/skills of the project", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      const file = writeSkill(
        path.join(cwd, ".mm/skills"),
        "release",
        skillText("release", "Cut a release of the package")
      )
      fs.mkdirSync(path.join(cwd, ".mm/skills/not-a-skill"))
      const loaded = yield* loadSkills([".mm/skills", "~/.mm/skills"], cwd, tempDir("mm-skills-"))
      expect(loaded).toEqual({
        skills: [{ name: "release", description: "Cut a release of the package", path: file }],
        warnings: []
      })
    }))

  it.effect("skips a malformed skill with a warning and keeps the good one", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      const dir = path.join(cwd, ".mm/skills")
      const good = writeSkill(dir, "good", skillText("good", "Works"))
      const broken = writeSkill(dir, "broken", "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
      const bare = writeSkill(dir, "bare", "# no front matter here\n")
      const nameless = writeSkill(dir, "nameless", "---\ndescription: has no name\n---\n")
      const loaded = yield* loadSkills([".mm/skills"], cwd, tempDir("mm-skills-"))
      expect(loaded.skills).toEqual([{ name: "good", description: "Works", path: good }])
      expect(loaded.warnings).toHaveLength(3)
      expect(loaded.warnings[0]).toBe(
        `skipped skill ${bare}: no front matter (the file must start with a --- line, and a second --- line must close it)`
      )
      expect(loaded.warnings[1]).toMatch(
        new RegExp(`^skipped skill ${broken}: front matter is not valid YAML \\(line \\d+, column \\d+\\): `)
      )
      expect(loaded.warnings[2]).toBe(`skipped skill ${nameless}: front matter has no "name"`)
      for (const warning of loaded.warnings) expect(warning).not.toContain("\n")
    }))

  it.effect("expands ~ to the home directory and resolves relative dirs against cwd", () =>
    Effect.gen(function*() {
      const home = tempDir("mm-skills-")
      const cwd = tempDir("mm-skills-")
      const mine = writeSkill(path.join(home, ".mm/skills"), "mine", skillText("mine", "A personal skill"))
      const local = writeSkill(path.join(cwd, "custom"), "local", skillText("local", "A project skill"))
      const loaded = yield* loadSkills(["custom", "~/.mm/skills"], cwd, home)
      expect(loaded.skills.map((s) => [s.name, s.path])).toEqual([
        ["local", local],
        ["mine", mine]
      ])
      expect(path.isAbsolute(loaded.skills[0].path)).toBe(true)
    }))

  it.effect("missing directories are fine", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      expect(yield* loadSkills([".mm/skills", "~/.mm/skills", "/no/such/dir"], cwd, path.join(cwd, "nohome"))).toEqual({
        skills: [],
        warnings: []
      })
    }))

  it.effect("on a duplicate name the first directory wins, with a warning", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      const home = tempDir("mm-skills-")
      const project = writeSkill(path.join(cwd, ".mm/skills"), "deploy", skillText("deploy", "Project way"))
      const personal = writeSkill(path.join(home, ".mm/skills"), "deploy", skillText("deploy", "Personal way"))
      const loaded = yield* loadSkills([".mm/skills", "~/.mm/skills"], cwd, home)
      expect(loaded.skills).toEqual([{ name: "deploy", description: "Project way", path: project }])
      expect(loaded.warnings).toEqual([`skipped skill ${personal}: the name "deploy" is already used by ${project}`])
    }))

  it.effect("a directory listed twice (home = project) is read once", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      writeSkill(path.join(cwd, ".mm/skills"), "x", skillText("x", "once"))
      const loaded = yield* loadSkills([".mm/skills", "~/.mm/skills"], cwd, cwd)
      expect(loaded.skills).toHaveLength(1)
      expect(loaded.warnings).toEqual([])
    }))

  it.effect("sees a skill change between two turns", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-skills-")
      const file = writeSkill(path.join(cwd, ".mm/skills"), "x", skillText("x", "before"))
      expect((yield* loadSkills([".mm/skills"], cwd, cwd)).skills[0].description).toBe("before")
      fs.writeFileSync(file, skillText("x", "after, and longer"))
      expect((yield* loadSkills([".mm/skills"], cwd, cwd)).skills[0].description).toBe("after, and longer")
    }))
})

describe("parseSkillFile", () => {
  it("reads name and description, folding a multi-line description", () => {
    expect(parseSkillFile("---\r\nname: a\r\ndescription: >\r\n  two\r\n  lines\r\n---\r\nbody")).toEqual(
      Either.right({ name: "a", description: "two lines" })
    )
  })

  it("says what is wrong", () => {
    expect(parseSkillFile("---\nname: a\n")).toEqual(Either.left(expect.stringMatching(/^no front matter/)))
    expect(parseSkillFile("---\n- a\n---\n")).toEqual(
      Either.left("front matter must be a YAML mapping with name and description")
    )
    expect(parseSkillFile("---\nname: 3\ndescription: d\n---\n")).toEqual(
      Either.left("\"name\" in the front matter must be a string")
    )
    expect(parseSkillFile("---\nname: a\ndescription: ''\n---\n")).toEqual(
      Either.left("\"description\" in the front matter is empty")
    )
  })
})

describe("skillsPrompt", () => {
  it("is empty without skills", () => {
    expect(skillsPrompt([])).toBe("")
  })

  it("lists name, description and path, and says to read the file with read_file", () => {
    const prompt = skillsPrompt([
      { name: "release", description: "Cut a release", path: "/p/.mm/skills/release/SKILL.md" },
      { name: "db", description: "Migrate the database", path: "/home/u/.mm/skills/db/SKILL.md" }
    ])
    expect(prompt).toContain("read_file")
    expect(prompt).toContain("- release: Cut a release\n  file: /p/.mm/skills/release/SKILL.md")
    expect(prompt).toContain("- db: Migrate the database\n  file: /home/u/.mm/skills/db/SKILL.md")
    expect(prompt.startsWith("# Skills")).toBe(true)
  })
})
