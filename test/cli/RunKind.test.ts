import { describe, expect, it } from "@effect/vitest"

import { runKind } from "../../src/CoreLoader"

const kind = (...args: ReadonlyArray<string>) => runKind(["node", "mm.js", ...args])

describe("the kind of run the code cache records", () => {
  it("tells print mode, ACP, the subcommands and the terminal apart", () => {
    expect(kind()).toBe("terminal")
    expect(kind("why is the sky blue?")).toBe("terminal")
    expect(kind("--continue")).toBe("terminal")
    expect(kind("-p", "hi")).toBe("print")
    expect(kind("--print", "hi")).toBe("print")
    expect(kind("-yp", "hi")).toBe("print")
    expect(kind("acp")).toBe("acp")
    expect(kind("sessions", "list")).toBe("command")
    expect(kind("init")).toBe("command")
    // a question after `--` is never an option
    expect(kind("--", "-p")).toBe("terminal")
  })
})
