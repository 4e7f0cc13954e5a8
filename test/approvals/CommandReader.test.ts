import { beforeAll, describe, expect, it } from "@effect/vitest"

import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"

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
