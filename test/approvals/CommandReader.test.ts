import { beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { Parser } from "web-tree-sitter"

import { classifyCommand } from "../../src/approvals/ApprovalScope"
import { type CommandReader, loadCommandReader, PARSED_MAX_BYTES } from "../../src/approvals/CommandReader"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})

describe("CommandReader reads words only when every part is literal", () => {
  const simple: Array<[string, Array<string>]> = [
    ["ls", ["ls"]],
    ["ls -la src", ["ls", "-la", "src"]],
    ["  cargo   build  --release ", ["cargo", "build", "--release"]],
    ["git commit -m 'fix; it'", ["git", "commit", "-m", "fix; it"]],
    ["git commit -m \"a | b > c\"", ["git", "commit", "-m", "a | b > c"]],
    ["\"npm\" test", ["npm", "test"]],
    ["grep -rn 'a b' src", ["grep", "-rn", "a b", "src"]],
    ["echo 'two\nlines'", ["echo", "two\nlines"]],
    ["npm test --flag=\"x y\"", ["npm", "test", "--flag=x y"]],
    ["git show HEAD~1", ["git", "show", "HEAD~1"]],
    ["echo 'a\\'", ["echo", "a\\"]],
    ["ls\n", ["ls"]],
    ["ls café", ["ls", "café"]],
    ["python3 -m pytest -q", ["python3", "-m", "pytest", "-q"]]
  ]
  for (const [command, words] of simple) {
    it(`${JSON.stringify(command)} → ${JSON.stringify(words)}`, () => {
      expect(reader.read(command)).toEqual({ _tag: "Simple", words })
    })
  }

  const unresolved: Array<[string, RegExp]> = [
    // the two forms that desynchronised the hand-written tokenizer from bash
    ["ls \"$\\\n(touch /elsewhere/p1)\"", /expansion|escape/],
    ["ls $'\\'' ; touch /elsewhere/p2 ; echo \\'", /more than one|\$'/],
    ["ls $'\\''", /\$'…' quoting/],
    ["echo $\"hello\"", /\$"…" quoting/],
    ["echo $HOME", /\$ expansion/],
    ["echo ${HOME}", /expansion/],
    ["echo $(whoami)", /command substitution/],
    ["echo `whoami`", /command substitution/],
    ["diff <(ls a) <(ls b)", /process substitution/],
    ["echo hi > out.txt", /redirection/],
    ["npm test 2>&1", /redirection/],
    ["cat <<'EOF'\nx\nEOF", /here-document|redirection/],
    ["cat <<< hi", /here-string|redirection/],
    ["ls -l \\\n -a", /line continuation/],
    ["ls # a comment", /comment/],
    ["(cd /tmp && rm x)", /subshell/],
    ["{ ls; }", /group/],
    ["FOO=1 npm test", /assignment/],
    ["npm test; rm -rf x", /more than one/],
    ["make && make install", /list/],
    ["cat a | sh", /pipe/],
    ["sleep 10 &", /background|more than one/],
    ["echo 'unterminated", /cannot read/],
    ["echo {a,b}", /brace|specially/],
    ["ls *.ts", /specially/],
    ["ls ~/x", /specially/],
    ["echo a\\ b", /specially/],
    ["! ls", /negation/],
    ["", /empty/]
  ]
  for (const [command, reason] of unresolved) {
    it(`${JSON.stringify(command)} is not resolved (${reason.source})`, () => {
      const reading = reader.read(command)
      expect(reading._tag).toBe("Unresolved")
      if (reading._tag === "Unresolved") expect(reading.reason).toMatch(reason)
    })
  }
})

describe("no command stops the classifier from reading the next one", () => {
  // 100 KB of `a | `: tree-sitter's WebAssembly aborted on it after seconds, and every later
  // parse in the process failed with it
  it("a command over the size limit is asked as it is, with why, and the next one is read", () => {
    const command = "a | ".repeat(25_000)
    expect(classifyCommand(reader.read, command, process.cwd())).toEqual({
      _tag: "ExactOnly",
      reason: "too long to check (100000 bytes)"
    })
    expect(reader.read("git log -n 3")).toEqual({ _tag: "Simple", words: ["git", "log", "-n", "3"] })
  })

  it("the limit is in bytes, and a command just within it is parsed", () => {
    const within = `ls ${"a".repeat(PARSED_MAX_BYTES - 3)}`
    expect(reader.read(within)).toEqual({ _tag: "Simple", words: ["ls", "a".repeat(PARSED_MAX_BYTES - 3)] })
    const over = `ls ${"é".repeat(PARSED_MAX_BYTES / 2)}`
    expect(reader.read(over)).toEqual({
      _tag: "Unresolved",
      reason: `too long to check (${PARSED_MAX_BYTES + 3} bytes)`
    })
  })

  it("when the parser throws, the command is asked with why, and a new parser reads the next one", () => {
    const used: Array<Parser> = []
    const parse = Parser.prototype.parse
    const spy = vi.spyOn(Parser.prototype, "parse").mockImplementation(function(this: Parser, ...args) {
      used.push(this)
      if (used.length === 1) throw new WebAssembly.RuntimeError("Aborted(). Build with -sASSERTIONS for more info.")
      return parse.apply(this, args)
    })
    try {
      expect(reader.read("ls -la")).toEqual({ _tag: "Unresolved", reason: "the bash parser failed on it (Aborted())" })
      expect(reader.read("ls -la")).toEqual({ _tag: "Simple", words: ["ls", "-la"] })
      expect(used).toHaveLength(2)
      expect(used[1]).not.toBe(used[0])
    } finally {
      spy.mockRestore()
    }
  })
})
