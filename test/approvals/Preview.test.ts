import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "@effect/vitest"

import { previewContent } from "../../src/acp/ToolUpdates"
import { alwaysChoices as alwaysChoicesWith, type CallToApprove } from "../../src/approvals/ApprovalScope"
import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"
import { previewLines } from "../../src/approvals/PreviewLines"
import { choicesOf, previewBlock, wrapLine } from "../../src/terminal/ApprovalPrompt"
import { colored, plain } from "../../src/text/Style"
import { callOf, previewNow } from "../support/tools"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})
const alwaysChoices = (call: CallToApprove) => alwaysChoicesWith(call, (command) => reader.read(command))

const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-preview-")))
const texts = (lines: ReturnType<typeof previewLines>) => lines.map((l) => l.text)

describe("a tool's preview", () => {
  // 200,000 runs of backticks spread into Math.max overflowed the stack (RangeError): the
  // editor's permission request for a 400 KB command failed
  it("bash, for an editor: a fence longer than the longest of 200,000 runs of backticks", () => {
    const command = "`a".repeat(200_000) + "````b"
    expect(previewContent(previewNow("bash", { command }, "/p"))).toEqual([
      { type: "content", content: { type: "text", text: `\`\`\`\`\`sh\n${command}\n\`\`\`\`\`` } }
    ])
  })

  it("bash: every line of the command, and its timeout", () => {
    const command = "cat > deploy.sh <<'EOF'\nset -e\nnpm ci\nnpm run build\ncurl -s https://x.example | sh\nEOF"
    const preview = previewNow("bash", { command, timeout: 30 }, "/p")
    expect(texts(previewLines(preview))).toEqual([...command.split("\n"), "(timeout 30 s)"])
  })

  it("edit_file: a unified diff of the file on disk against the file after the edit", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "a.ts"), "const a = 1\nconst b = 2\nconst c = 3\n")
    const preview = previewNow("edit_file", { path: "a.ts", old: "const b = 2", new: "const b = 20" }, dir)
    expect(previewLines(preview)).toEqual([
      { kind: "header", text: "--- a.ts" },
      { kind: "header", text: "+++ a.ts" },
      { kind: "hunk", text: "@@ -1,3 +1,3 @@" },
      { kind: "context", text: " const a = 1" },
      { kind: "removed", text: "-const b = 2" },
      { kind: "added", text: "+const b = 20" },
      { kind: "context", text: " const c = 3" }
    ])
  })

  it("edit_file that will fail says so: not found, found twice, no such file", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "a.txt"), "x\nx\n")
    expect(texts(previewLines(previewNow("edit_file", { path: "a.txt", old: "y", new: "z" }, dir)))).toEqual([
      "this edit will fail: old text not found in a.txt; read the file again and copy the text exactly, whitespace included"
    ])
    expect(texts(previewLines(previewNow("edit_file", { path: "a.txt", old: "x", new: "z" }, dir)))).toEqual([
      "this edit will fail: old text occurs 2 times in a.txt; give more context so it is unique"
    ])
    expect(texts(previewLines(previewNow("edit_file", { path: "nope.txt", old: "x", new: "z" }, dir)))).toEqual([
      "no such file: nope.txt; this edit will fail"
    ])
  })

  it("edit_file of a file that is not UTF-8 text says it will fail", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    expect(texts(previewLines(previewNow("edit_file", { path: "latin1.txt", old: "caf", new: "CAF" }, dir)))).toEqual([
      "latin1.txt is not UTF-8 text; edit_file changes only UTF-8 files; this edit will fail"
    ])
  })

  it("write_file over an existing file: a diff against its current content", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "conf.ini"), "a=1\nb=2\n")
    const preview = previewNow("write_file", { path: "conf.ini", content: "a=1\nb=3\n" }, dir)
    expect(texts(previewLines(preview))).toEqual([
      "--- conf.ini",
      "+++ conf.ini",
      "@@ -1,2 +1,2 @@",
      " a=1",
      "-b=2",
      "+b=3"
    ])
  })

  it("write_file of a new file: its size and its first 40 lines, then how many more", () => {
    const dir = project()
    const content = Array.from({ length: 45 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
    const lines = texts(previewLines(previewNow("write_file", { path: "new.txt", content }, dir)))
    expect(lines[0]).toBe(`new file new.txt (${Buffer.byteLength(content)} bytes, 45 lines)`)
    expect(lines.slice(1, 41)).toEqual(Array.from({ length: 40 }, (_, i) => `+line ${i + 1}`))
    expect(lines.slice(41)).toEqual(["… 5 more lines"])
  })

  it("a file outside the project says so first", () => {
    const dir = project()
    const outside = path.join(path.dirname(dir), "elsewhere.txt")
    const lines = previewLines(previewNow("write_file", { path: "../elsewhere.txt", content: "x" }, dir))
    expect(lines[0]).toEqual({ kind: "warning", text: `outside the project: ${outside}` })
  })

  it("a protected path says it is asked as if outside, and why, in the terminal and to an editor", () => {
    const dir = project()
    fs.mkdirSync(path.join(dir, ".git"))
    fs.writeFileSync(path.join(dir, ".git", "config"), "[core]\n")
    fs.symlinkSync(".git/config", path.join(dir, "cfg"))
    fs.writeFileSync(path.join(dir, "agent.yaml"), "permissions: ask\n")
    const config = previewNow("write_file", { path: ".git/config", content: "[core]\nfsmonitor = x\n" }, dir)
    expect(config).toMatchObject({ outsideProject: true, protectedPath: true, real: path.join(dir, ".git/config") })
    const why = "(it is in .git/, where a line of config can make git run a program)"
    expect(previewLines(config).slice(0, 3)).toEqual([
      { kind: "warning", text: `protected, asked as if outside the project: ${path.join(dir, ".git/config")}` },
      { kind: "warning", text: why },
      { kind: "header", text: "--- .git/config" }
    ])
    // through a link: the real path, and the link named
    const linked = texts(previewLines(previewNow("write_file", { path: "cfg", content: "x" }, dir)))
    expect(linked.slice(0, 2)).toEqual([
      `protected, asked as if outside the project: ${path.join(dir, ".git/config")}`,
      "(cfg is a link: it is in .git/, where a line of config can make git run a program)"
    ])
    // an editor is sent the same two lines before the diff
    const edit = previewNow("edit_file", { path: "agent.yaml", old: "ask", new: "allow" }, dir)
    expect(previewContent(edit)[0]).toEqual({
      type: "content",
      content: {
        type: "text",
        text: `protected, asked as if outside the project: ${path.join(dir, "agent.yaml")}\n` +
          "(it is the project's agent.yaml, which says what mm may run)"
      }
    })
    expect(previewContent(edit)[1]).toMatchObject({ type: "diff", path: path.join(dir, "agent.yaml") })
    // a file beside them is an ordinary edit
    expect(previewNow("write_file", { path: ".gitignore", content: "x" }, dir)).toMatchObject({ outsideProject: false })
  })
})

describe("a rewrite too large to diff", () => {
  it("is summed up in one line, offers [v] in the terminal, and is text, not a diff, for an editor", () => {
    const dir = project()
    const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join("")
    fs.writeFileSync(path.join(dir, "big.txt"), numbered(5000, "old"))
    const preview = previewNow("write_file", { path: "big.txt", content: numbered(6000, "new") }, dir)
    const summary = "big.txt: rewrites 6000 lines (5000 → 6000 lines); diff too large to show"
    expect(texts(previewLines(preview))).toEqual([summary])
    const request = { preview, title: "big.txt", always: [] }
    expect(previewBlock(request, plain, 200)).toMatch(/diff too large to show — \[v\]iew in \S/)
    expect(choicesOf(request).keys).toContain("v")
    expect(previewContent(preview)).toEqual([{ type: "content", content: { type: "text", text: summary } }])
  })
})

describe("the terminal's approval prompt", () => {
  it("colours + green, - red, hunk headers and line numbers dim; plain without colour", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "a.txt"), "old\n")
    const preview = previewNow("edit_file", { path: "a.txt", old: "old", new: "new" }, dir)
    const shown = previewBlock({ preview, title: "a.txt" }, colored, 80)
    expect(shown).toContain("  \u001b[2m  1\u001b[22m \u001b[31m-old\u001b[39m\n")
    expect(shown).toContain("  \u001b[2m  1\u001b[22m \u001b[32m+new\u001b[39m\n")
    expect(shown).toContain("  \u001b[2m@@ -1,1 +1,1 @@\u001b[22m\n")
    expect(previewBlock({ preview, title: "a.txt" }, plain, 80)).toBe(
      "  --- a.txt\n  +++ a.txt\n  @@ -1,1 +1,1 @@\n    1 -old\n    1 +new\n"
    )
  })

  it("a diff line too long for the terminal wraps, each row keeping its marker under the line's number", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "a.txt"), "keep\nold\n")
    const preview = previewNow("edit_file", { path: "a.txt", old: "old", new: "x".repeat(50) }, dir)
    const rows = previewBlock({ preview, title: "a.txt" }, plain, 30).split("\n")
    expect(rows).toContain("    1  keep")
    expect(rows).toContain("    2 -old")
    const added = rows.filter((row) => row.includes("+x"))
    expect(added[0]).toBe(`    2 +${"x".repeat(23)}`)
    expect(added.slice(1).every((row) => row.startsWith("      +x"))).toBe(true)
    expect(added.map((row) => row.slice(7)).join("")).toBe("x".repeat(50))
  })

  it("wraps long lines, never cuts them, and shows escape sequences as their bytes", () => {
    const command = `echo ${"x".repeat(100)}\u001b[2Jdone`
    const shown = previewBlock({ preview: previewNow("bash", { command }, "/p"), title: "echo …" }, plain, 42)
    expect(shown).toBe(`  echo ${"x".repeat(35)}\n  ${"x".repeat(40)}\n  ${"x".repeat(25)}\\x1b[2Jdone\n`)
    expect(wrapLine("abc", 2)).toEqual(["ab", "c"])
  })

  it("a one-line command already whole on the tool's line is not shown twice", () => {
    const block = (command: string, title: string, timeout?: number) =>
      previewBlock({ preview: previewNow("bash", { command, timeout }, "/p"), title }, plain, 80)
    expect(block("ls -la", "ls -la")).toBe("")
    expect(block("ls -la", "ls -la", 5)).toBe("  ls -la\n  (timeout 5 s)\n")
    expect(block("ls\npwd", "ls …")).toBe("  ls\n  pwd\n")
  })

  it("names the scope of always; offers project for file tools; nothing of the kind outside the project", () => {
    expect(choicesOf({ always: alwaysChoices(callOf("bash", { command: "npm test -- -u" }, "/p")) }, 120))
      .toEqual({
        line: "allow? [y]es  [n]o  [a]lways run exactly this command  [s]ession only  [t]ell mm what to do instead: ",
        keys: ["y", "n", "a", "s", "t"]
      })
    const dir = project()
    expect(choicesOf({ always: alwaysChoices(callOf("edit_file", { path: "src/a.ts" }, dir)) })).toEqual({
      line: "allow? [y]es  [n]o  [a]lways src/a.ts  [p]roject  [t]ell mm what to do instead: ",
      keys: ["y", "n", "a", "p", "t"]
    })
    expect(choicesOf({ always: alwaysChoices(callOf("write_file", { path: "/etc/hosts" }, dir)) }))
      .toEqual({
        line: "allow? [y]es  [n]o  [t]ell mm what to do instead: ",
        keys: ["y", "n", "t"]
      })
    expect(choicesOf({ always: alwaysChoices(callOf("write_file", { path: ".git/config" }, dir)) }))
      .toEqual({
        line: "allow? [y]es  [n]o  [t]ell mm what to do instead: ",
        keys: ["y", "n", "t"]
      })
  })
})
