import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { TABLE_END, TABLE_START, toolsTable, withToolsTable } from "../../scripts/tools-table"
import { SUB_AGENT_TOOLS } from "../../src/config/ConfigSchema"
import { allTools, builtinRegistry, builtinTools, toolSentence } from "../../src/tools/Registry"

const srcFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    return entry.isDirectory() ? srcFiles(file) : entry.name.endsWith(".ts") ? [file] : []
  })

describe("the registry of tools", () => {
  it("is the only list of the built-in tools' names in src/: each name is spelled in its own module alone", () => {
    const files = srcFiles("src").map((file) => ({ file, text: fs.readFileSync(file, "utf8") }))
    for (const tool of builtinTools) {
      const own = files.filter(({ text }) => text.includes(`name: "${tool.name}",`))
      expect(own.map(({ file }) => file), tool.name).toHaveLength(1)
      // agent.yaml's schema names the tools a sub-agent may be given (checked below against this list)
      const spelled = files.filter(({ text }) => text.includes(`"${tool.name}"`)).map(({ file }) => file)
        .filter((file) => file !== path.join("src", "config", "ConfigSchema.ts"))
      expect(spelled, tool.name).toEqual([own[0].file])
    }
  })

  it("names in agent.yaml's schema every built-in tool a sub-agent may have: all but task", () => {
    expect([...SUB_AGENT_TOOLS].sort()).toEqual(
      builtinTools.map((tool) => tool.name).filter((name) => name !== "task").sort()
    )
  })

  it("tells the model each tool's parameters as JSON Schema derived from the schema calls are decoded with", () => {
    expect(Object.fromEntries(builtinRegistry.specs.map((spec) => [spec.name, spec.parameters]))).toEqual({
      bash: {
        type: "object",
        required: ["command"],
        properties: {
          command: { type: "string", description: "the command line, run by bash -c" },
          timeout: { type: "number", description: "seconds before the command is killed (default 120)" }
        }
      },
      read_file: {
        type: "object",
        required: ["path"],
        properties: {
          path: { type: "string", description: "relative to the project, or absolute" },
          offset: { type: "integer", minimum: 1, description: "first line to read, from 1 (default 1)" },
          limit: { type: "integer", minimum: 1, description: "most lines to read (default 2000)" }
        }
      },
      write_file: {
        type: "object",
        required: ["path", "content"],
        properties: {
          path: { type: "string", description: "relative to the project, or absolute" },
          content: { type: "string", description: "the complete new content of the file" }
        }
      },
      edit_file: {
        type: "object",
        required: ["path", "old", "new"],
        properties: {
          path: { type: "string", description: "relative to the project, or absolute" },
          old: { type: "string", description: "the exact text to replace" },
          new: { type: "string", description: "the text to put in its place" }
        }
      },
      grep: {
        type: "object",
        required: ["pattern"],
        properties: {
          pattern: { type: "string", description: "regular expression" },
          path: { type: "string", description: "folder or file to search (default: the project)" },
          glob: { type: "string", description: "only files matching this glob" },
          ignore_case: { type: "boolean" }
        }
      },
      glob: {
        type: "object",
        required: ["pattern"],
        properties: {
          pattern: { type: "string", description: "glob pattern" },
          path: { type: "string", description: "folder to search (default: the project)" }
        }
      },
      // told in a hand-written, shorter form (src/tools/Todo.ts): it goes with every request
      todo: {
        type: "object",
        required: ["todos"],
        properties: {
          todos: {
            type: "array",
            items: {
              type: "object",
              required: ["content", "status"],
              properties: {
                content: { type: "string" },
                status: { enum: ["pending", "in_progress", "completed"] },
                priority: { enum: ["high", "medium", "low"] }
              }
            }
          }
        }
      },
      task: {
        type: "object",
        required: ["description", "prompt"],
        properties: {
          description: { type: "string", description: "3-6 words" },
          prompt: { type: "string", description: "the whole task" }
        }
      }
    })
  })

  it("names every tool and what it is for in one sentence of the system prompt", () => {
    expect(builtinRegistry.sentence).toBe(
      "You can run shell commands with `bash`, read files with `read_file`, write files with `write_file`, " +
        "edit files with `edit_file`, find text with `grep` and find files with `glob`; " +
        "`read_file`, `grep` and `glob` need no approval inside the project."
    )
    expect(toolSentence([])).toBe("")
    expect(toolSentence(builtinTools.slice(0, 1))).toBe("You can run shell commands with `bash`.")
  })

  it("is what docs/reference/tools.md's table shows (npm run docs writes it)", () => {
    const page = fs.readFileSync("docs/reference/tools.md", "utf8")
    expect(page).toContain(TABLE_START)
    expect(page).toContain(TABLE_END)
    expect(withToolsTable(page, toolsTable(allTools))).toBe(page)
    expect(withToolsTable("no markers here", "table")).toBeUndefined()
  })
})
