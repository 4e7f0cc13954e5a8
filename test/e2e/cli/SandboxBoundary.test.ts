// The sandbox as the boundary (docs/explanation/sandbox.md): under `permissions: auto`, where
// the model's commands run without a question, nothing they do runs, writes, signals or reads
// outside it. Each test has the fake model run commands that try, with real bubblewrap, and
// looks at the host afterwards.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { MmProcess, runMm, tempProject, withSessions } from "../../support/MmProcess"
import { isAlive } from "../../support/processes"
import { processesRunning, requireSandbox } from "../../support/sandbox"
import { until } from "../../support/until"

const bash = (id: string, command: string, timeout?: number) => ({
  id,
  name: "bash",
  arguments: timeout === undefined ? { command } : { command, timeout }
})

/** agent.yaml lines for `permissions: auto` with sessions on, and any more lines. */
const autoConfig = (url: string, extra: ReadonlyArray<string> = []): Array<string> =>
  withSessions(url, extra).map((line) => (line === "permissions: allow" ? "permissions: auto" : line))

const git = (cwd: string, ...args: Array<string>): void => {
  execFileSync("git", ["-c", "user.name=mm test", "-c", "user.email=mm@test", ...args], { cwd, stdio: "ignore" })
}

/** A git work tree with one commit, as a user's project is. */
const gitProject = (url: string, extra: ReadonlyArray<string> = []): string => {
  const project = tempProject(autoConfig(url, extra))
  git(project, "init", "-q")
  fs.writeFileSync(path.join(project, "README"), "a project\n")
  git(project, "add", "README")
  git(project, "commit", "-q", "-m", "first")
  return project
}

describe("the sandbox is the boundary (permissions: auto, real bubblewrap)", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    requireSandbox()
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a command cannot make git run something: .git/ is read-only, and mm's next turns run nothing", async () => {
    const marker = `/var/tmp/mm-fsmonitor-${process.pid}-${Date.now()}`
    const project = gitProject(server.url)
    const config = fs.readFileSync(path.join(project, ".git", "config"), "utf8")
    server.push(
      {
        toolCalls: [
          bash("append", `printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' >> .git/config`),
          bash("gitconfig", `git config core.fsmonitor "touch ${marker}"`),
          bash("hook", `echo "touch ${marker}" > .git/hooks/post-checkout`),
          bash("replace", "mv .git/config .git/config.old")
        ]
      },
      { text: "tried" }
    )
    const first = await runMm(project, [], ["-p", "make git run something"])
    expect(first.stdout).toBe("tried\n")
    const results = lastToolResults(server)
    for (const id of ["append", "gitconfig", "hook"]) expect(results[id]).toMatch(/Read-only file system/)
    expect(results.replace).toMatch(/^exit code [1-9]/)
    expect(fs.readFileSync(path.join(project, ".git", "config"), "utf8")).toBe(config)
    expect(fs.existsSync(path.join(project, ".git", "hooks", "post-checkout"))).toBe(false)

    // the next turns (-p --continue, and the terminal) ask git for the environment block
    server.push({ text: "again" }, { text: "once more" })
    const second = await runMm(project, [], ["-p", "--continue", "again"])
    expect(second.stdout).toBe("again\n")
    const terminal = await runMm(project, ["once more"], [])
    expect(terminal.code).toBe(0)
    expect(fs.existsSync(marker)).toBe(false)
  })

  it("a command cannot rewrite mm's records or the project's agent.yaml", async () => {
    const project = gitProject(server.url)
    server.push({ text: "first" })
    expect((await runMm(project, [], ["-p", "first"])).stdout).toBe("first\n")
    const sessions = path.join(project, ".mm", "sessions")
    const [file] = fs.readdirSync(sessions).filter((f) => f.endsWith(".json"))
    const before = fs.readFileSync(path.join(sessions, file), "utf8")
    const yaml = fs.readFileSync(path.join(project, "agent.yaml"), "utf8")
    server.push(
      {
        toolCalls: [
          bash("forge", `echo '{}' > .mm/sessions/${file}`),
          bash("allow", "echo '[]' > .mm/permissions.json"),
          bash("yaml", "echo 'sandbox: off' >> agent.yaml"),
          bash("ordinary", "echo work > src.txt && echo done")
        ]
      },
      { text: "tried" }
    )
    expect((await runMm(project, [], ["-p", "forge"])).stdout).toBe("tried\n")
    const results = lastToolResults(server)
    for (const id of ["forge", "allow", "yaml"]) expect(results[id]).toMatch(/Read-only file system/)
    expect(results.ordinary).toMatch(/^exit code 0\ndone/)
    expect(fs.readFileSync(path.join(sessions, file), "utf8").startsWith(before.slice(0, 40))).toBe(true)
    expect(fs.existsSync(path.join(project, ".mm", "permissions.json"))).toBe(false)
    expect(fs.readFileSync(path.join(project, "agent.yaml"), "utf8")).toBe(yaml)
  })

  it("a command sees and signals only its own processes, and none outlives its call", async () => {
    const project = tempProject(autoConfig(server.url))
    const outsider = execFileSync("sh", ["-c", `sleep 302.${process.pid} >/dev/null 2>&1 & echo $!`], {
      encoding: "utf8"
    }).trim()
    const left = ["sleep", `303.${process.pid}`]
    server.push(
      {
        toolCalls: [
          bash("see", `ls /proc/${outsider} >/dev/null 2>&1 && echo seen || echo unseen; ls -d /proc/[0-9]* | wc -l`),
          bash("signal", `kill -9 ${outsider}; echo "kill=$?"`),
          bash("daemon", `(${left.join(" ")} &) ; setsid ${left.join(" ")} >/dev/null 2>&1 & echo started`)
        ]
      },
      { text: "tried" }
    )
    // the terminal, so that mm is still running when the call has ended
    const mm = new MmProcess(project)
    mm.send("reach out")
    await until(() => mm.stdout.includes("tried"), "the turn to end")
    const results = lastToolResults(server)
    expect(results.see).toMatch(/^exit code 0\nunseen\n\s*\d+/)
    expect(Number(/unseen\n\s*(\d+)/.exec(results.see)?.[1])).toBeLessThan(10)
    expect(results.signal).toMatch(/kill=1/)
    expect(isAlive(Number(outsider))).toBe(true)
    expect(results.daemon).toMatch(/^exit code 0\nstarted/)
    // while mm still runs, nothing the call left is running
    await until(() => processesRunning(left).length === 0, "the call's processes to end with it")
    expect(await mm.end()).toBe(0)
    process.kill(Number(outsider), "SIGKILL")
  })

  it("no host socket is reachable: /run is its own, and sockets the environment names are covered", async () => {
    const project = tempProject(autoConfig(server.url))
    const underRun = `/run/mm-test-${process.pid}.sock`
    const named = `/var/tmp/mm-agent-${process.pid}.sock`
    const connected: Array<string> = []
    const servers = [underRun, named].map((socket) => {
      fs.rmSync(socket, { force: true })
      const listening = net.createServer((conn) => {
        connected.push(socket)
        conn.end("hello\n")
      })
      listening.listen(socket)
      return listening
    })
    await until(() => servers.every((s) => s.listening), "the sockets to listen")
    const connect = (socket: string) =>
      `node -e "require('net').connect('${socket}').on('connect',()=>console.log('connected')).on('error',e=>console.log('failed',e.code))"`
    server.push(
      { toolCalls: [bash("run", connect(underRun)), bash("named", connect(named))] },
      { text: "tried" }
    )
    const run = await runMm(project, [], ["-p", "connect"], { SSH_AUTH_SOCK: named })
    expect(run.stdout).toBe("tried\n")
    const results = lastToolResults(server)
    expect(results.run).toMatch(/failed ENOENT/)
    expect(results.named).toMatch(/failed ECONNREFUSED/)
    expect(connected).toEqual([])
    for (const s of servers) s.close()
    fs.rmSync(underRun, { force: true })
    fs.rmSync(named, { force: true })
  })

  it("secrets stay out: mm's key, names that look secret, and what other processes hold", async () => {
    const project = tempProject(
      autoConfig(server.url, ["sandbox:", "  mode: on", "  env: [MM_LET_THROUGH_TOKEN]"]).map((line) =>
        line === "  name: fake-model" ? "  name: fake-model\n  apiKeyEnv: MM_BOUNDARY_KEY" : line
      )
    )
    server.push(
      {
        toolCalls: [
          bash(
            "env",
            "for v in MM_BOUNDARY_KEY GITHUB_TOKEN AWS_PROFILE MY_SERVICE_API_KEY MM_LET_THROUGH_TOKEN HOME; do echo \"$v=[${!v-absent}]\"; done"
          ),
          bash("proc", "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-boundary-secret")
        ]
      },
      { text: "looked" }
    )
    const run = await runMm(project, [], ["-p", "look"], {
      MM_BOUNDARY_KEY: "sk-boundary-secret-1234",
      GITHUB_TOKEN: "ghp_boundary",
      AWS_PROFILE: "prod",
      MY_SERVICE_API_KEY: "svc-boundary",
      MM_LET_THROUGH_TOKEN: "let-through"
    })
    expect(run.stdout).toBe("looked\n")
    const results = lastToolResults(server)
    for (const name of ["MM_BOUNDARY_KEY", "GITHUB_TOKEN", "AWS_PROFILE", "MY_SERVICE_API_KEY"]) {
      expect(results.env).toContain(`${name}=[absent]`)
    }
    expect(results.env).toContain("MM_LET_THROUGH_TOKEN=[let-through]")
    expect(results.env).toMatch(/HOME=\[\/.+\]/)
    expect(results.proc).toMatch(/^exit code 1\n0/)
  })

  it("limits: a fork bomb stops at the process limit, a large file at the size limit, each said in one line", async () => {
    const project = tempProject(
      autoConfig(server.url, ["sandbox:", "  mode: on", "  limits:", "    processes: 40", "    fileSize: 1"])
    )
    const sleep = ["sleep", `304.${process.pid}`]
    server.push(
      {
        toolCalls: [
          bash("bomb", `for i in $(seq 100); do ${sleep.join(" ")} & done; wait`, 3),
          bash("big", "head -c 3000000 /dev/zero > big.bin; echo wrote")
        ]
      },
      { text: "stopped" }
    )
    const run = await runMm(project, [], ["-p", "go wild"])
    expect(run.stdout).toBe("stopped\n")
    const results = lastToolResults(server)
    expect(results.bomb).toContain(
      "[sandbox: the call reached its limit of 40 processes at once (sandbox.limits.processes)]"
    )
    expect(results.big).toContain(
      "[sandbox: a file reached the limit of 1 MiB a call may write (sandbox.limits.fileSize)]"
    )
    expect(fs.statSync(path.join(project, "big.bin")).size).toBeLessThanOrEqual(1024 * 1024)
    expect(processesRunning(sleep)).toEqual([])
  })

  it("programs planted in a PATH directory inside the project are never what mm starts", async () => {
    const project = gitProject(server.url)
    const marker = `/var/tmp/mm-planted-${process.pid}-${Date.now()}`
    const bin = path.join(project, "node_modules", ".bin")
    // one confined call plants them, as a model could; PATH holds the directory, as npx sets it
    server.push(
      {
        toolCalls: [bash(
          "plant",
          `mkdir -p node_modules/.bin && for p in git bwrap sh bash env; do printf '#!/bin/sh\\ntouch ${marker}-$p\\n' > node_modules/.bin/$p; chmod +x node_modules/.bin/$p; done; echo planted`
        )]
      },
      { text: "planted" },
      { toolCalls: [bash("after", `touch ${marker}-outside; echo still-confined > inside.txt && cat inside.txt`)] },
      { text: "ran" }
    )
    const env = { PATH: `${bin}:${process.env.PATH}` }
    expect((await runMm(project, [], ["-p", "plant"], env)).stdout).toBe("planted\n")
    expect(fs.readdirSync(bin).sort()).toEqual(["bash", "bwrap", "env", "git", "sh"])
    const run = await runMm(project, [], ["-p", "--continue", "run something"], env)
    expect(run.stdout).toBe("ran\n")
    // the real bubblewrap and bash ran it: confined, the write outside refused, the rest done
    // (stderr and stdout interleave in either order)
    const after = lastToolResults(server).after
    expect(after).toMatch(/^exit code 0\n/)
    expect(after).toMatch(/^touch: .*-outside': Read-only file system$/m)
    expect(after).toMatch(/^still-confined$/m)
    expect(fs.existsSync(`${marker}-outside`)).toBe(false)
    for (const program of ["git", "bwrap", "sh", "bash", "env"]) {
      expect(fs.existsSync(`${marker}-${program}`)).toBe(false)
    }
  })
})
