// Which files look secret (issue 43): the built-in names, the configuration's `secrets:` globs,
// where a link really leads, and what grep and glob leave out because of it.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { isAllowed, type Scope } from "../../src/approvals/ApprovalScope"
import { loadCommandReader } from "../../src/approvals/CommandReader"
import { looksSecret, secretFilesOf, secretFilesWith } from "../../src/tools/SecretFiles"
import { runTool } from "../../src/tools/Tools"
import { toolServices } from "../support/layers"
import { tempDir } from "../support/processes"
import { toolNamed } from "../support/tools"

const write = (root: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), text)
}

describe("looksSecret: the built-in names", () => {
  it("names .env files, keys, certificates and the files tools keep tokens in, at any depth", () => {
    const secret = [
      ".env",
      ".env.local",
      "config/.env.production",
      "server.pem",
      "tls/server.key",
      "id_rsa",
      "id_rsa.pub",
      "/home/me/.ssh/id_ed25519",
      "id_ecdsa",
      ".npmrc",
      ".netrc",
      ".pypirc",
      ".pgpass",
      // in any case, as a file system that ignores case (macOS) reads them
      ".ENV",
      "Server.PEM",
      ".NpmRc"
    ]
    for (const file of secret) expect(looksSecret(file), file).toBe(true)
    const plain = [".env.example.md.txt/x", "env", "my.env", "README.md", "keys.ts", "id_rsafoo", ".key", ".npmrc.d/x"]
    for (const file of plain) expect(looksSecret(file), file).toBe(false)
  })
})

describe("secretFilesOf: the built-in names and the configuration's globs", () => {
  it.effect("a glob without / matches a name at any depth; one with / the path in the project", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-secrets-")
      const secrets = yield* secretFilesOf(root, ["*.tfvars", "config/prod/**", "./deploy/token.txt"])
      const yes = [".env", "infra/main.tfvars", "main.tfvars", "config/prod/db.yml", "deploy/token.txt", "a/id_rsa"]
      for (const file of yes) expect(secrets.test(path.join(root, file)), file).toBe(true)
      const no = ["config/dev/db.yml", "other/config/prod/db.yml", "token.txt", "src/app.ts"]
      for (const file of no) expect(secrets.test(path.join(root, file)), file).toBe(false)
    }))

  it.effect("no globs: the built-in names alone", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-secrets-")
      const secrets = yield* secretFilesOf(root, [])
      expect(secrets.test(path.join(root, ".env"))).toBe(true)
      expect(secrets.test(path.join(root, "main.tfvars"))).toBe(false)
    }))

  it.effect("a reason names the file; a link counts by where it leads, and by its own name", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-secrets-")
      write(root, ".env", "TOKEN=1\n")
      write(root, "notes.md", "plain\n")
      write(root, "conf/prod.yml", "password: 1\n")
      fs.symlinkSync(".env", path.join(root, "notes.txt"))
      fs.symlinkSync("notes.md", path.join(root, ".env.local"))
      fs.mkdirSync(path.join(root, "keys.key"))
      const secrets = yield* secretFilesOf(root, ["conf/*.yml"])
      expect(secrets.reason(".env")).toBe("`.env` looks like it holds secrets")
      expect(secrets.reason(path.join(root, ".env"))).toBe("`.env` looks like it holds secrets")
      expect(secrets.reason("sub/../.env")).toBe("`.env` looks like it holds secrets")
      expect(secrets.reason("notes.txt")).toBe("`notes.txt` leads to `.env`, which looks like it holds secrets")
      expect(secrets.reason(".env.local")).toBe("`.env.local` looks like it holds secrets")
      expect(secrets.reason("conf/prod.yml")).toBe("`conf/prod.yml` looks like it holds secrets")
      // a file that does not exist yet is asked all the same; a folder never is
      expect(secrets.reason("missing/.env")).toBe("`missing/.env` looks like it holds secrets")
      expect(secrets.reason("keys.key")).toBeUndefined()
      expect(secrets.reason("notes.md")).toBeUndefined()
      expect(secrets.reason(".")).toBeUndefined()
    }))

  it.effect("a link into a folder of the configuration's globs counts", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-secrets-")
      write(root, "vault/db.txt", "password\n")
      fs.symlinkSync("vault", path.join(root, "docs"))
      const secrets = yield* secretFilesOf(root, ["vault/**"])
      expect(secrets.reason("docs/db.txt")).toBe(
        "`docs/db.txt` leads to `vault/db.txt`, which looks like it holds secrets"
      )
    }))
})

const call = (name: string, args: object, cwd: string, secretFile?: (file: string) => boolean) =>
  runTool(toolNamed(name), JSON.stringify(args), {
    cwd,
    maxOutput: 16000,
    ...(secretFile === undefined ? {} : { secretFile })
  }).pipe(Effect.provide(toolServices()))

/** A project with a marker in its secret-looking files and in one plain file. */
const project = () => {
  const root = tempDir("mm-secrets-")
  write(root, ".env", "MARKER=env-secret\n")
  write(root, "deploy/id_rsa", "MARKER rsa-secret\n")
  write(root, "infra/main.tfvars", "MARKER = tfvars-secret\n")
  write(root, "src/app.ts", "// MARKER plain\n")
  return root
}

describe("grep and glob leave out the files that look secret", () => {
  it.effect("grep searches none of them, says how many it skipped, and searches one named as its path", () =>
    Effect.gen(function*() {
      const root = project()
      const secrets = yield* secretFilesOf(root, ["*.tfvars"])
      const all = yield* call("grep", { pattern: "MARKER" }, root, secrets.test)
      expect(all.output.split("\n")).toEqual([
        "src/app.ts:1: // MARKER plain",
        "[3 files that look secret (.env, keys…) not searched; read_file asks the user before reading one]"
      ])
      const none = yield* call("grep", { pattern: "nowhere|secret" }, root, secrets.test)
      expect(none.output).toBe(
        "no matches\n[3 files that look secret (.env, keys…) not searched; read_file asks the user before reading one]"
      )
      // without the configuration's test: the built-in names
      const builtin = yield* call("grep", { pattern: "MARKER" }, root)
      expect(builtin.output).toContain("infra/main.tfvars:1: MARKER = tfvars-secret")
      expect(builtin.output).toContain("[2 files that look secret")
      expect(builtin.output).not.toContain("env-secret")
      // named as the path (which the approval rule asked about), the file is searched
      const named = yield* call("grep", { pattern: "MARKER", path: ".env" }, root, secrets.test)
      expect(named.output).toBe(".env:1: MARKER=env-secret")
      const plain = yield* call("grep", { pattern: "MARKER", path: "src" }, root, secrets.test)
      expect(plain.output).toBe("src/app.ts:1: // MARKER plain")
    }))

  it.effect("glob lists the other files and says how many it left out", () =>
    Effect.gen(function*() {
      const root = project()
      const secrets = yield* secretFilesOf(root, ["*.tfvars"])
      const listed = yield* call("glob", { pattern: "**/*" }, root, secrets.test)
      expect(listed.output.split("\n")).toEqual([
        "src/app.ts",
        "[3 files that look secret (.env, keys…) not listed; read_file asks the user before reading one]"
      ])
      const targeted = yield* call("glob", { pattern: ".env*" }, root, secrets.test)
      expect(targeted.output).toBe(
        "no files match\n[1 file that looks secret (.env, keys…) not listed; read_file asks the user before reading one]"
      )
      const plain = yield* call("glob", { pattern: "*.ts" }, root, secrets.test)
      expect(plain.output).toBe("src/app.ts")
    }))
})

describe("the configuration's globs reach what a breaking pass tried", () => {
  it("a file found through a link to a folder the glob names counts as secret", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-secret-link-")))
    fs.mkdirSync(path.join(dir, "config", "prod"), { recursive: true })
    fs.writeFileSync(path.join(dir, "config", "prod", "db.yml"), "password: x\n")
    fs.symlinkSync("config", path.join(dir, "conf"))
    const secrets = secretFilesWith(dir, (relative) => relative.startsWith("config/prod/"))
    expect(secrets.test(path.join(dir, "conf", "prod", "db.yml"))).toBe(true)
    expect(secrets.test(path.join(dir, "config", "prod", "db.yml"))).toBe(true)
    expect(secrets.test(path.join(dir, "conf", "other.yml"))).toBe(false)
  })

  it("a read-only command's paths are checked against them: cat prod.tfvars is only exact", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-secret-cat-")))
    fs.writeFileSync(path.join(dir, "prod.tfvars"), "db_password = 1\n")
    fs.writeFileSync(path.join(dir, "main.tf"), "x\n")
    const reader = await loadCommandReader()
    const secrets = secretFilesWith(dir, (relative) => relative.endsWith(".tfvars"))
    const call = (command: string) => ({ tool: "bash", access: "command" as const, input: { command }, cwd: dir })
    const cat: Scope = { _tag: "CommandPrefix", words: ["cat"] }
    expect(isAllowed([cat], { ...call("cat prod.tfvars"), secret: secrets.test }, reader.read)).toBe(false)
    expect(isAllowed([cat], { ...call("cat main.tf"), secret: secrets.test }, reader.read)).toBe(true)
    // without the configuration's globs (the built-in names only), the same line is covered
    expect(isAllowed([cat], call("cat prod.tfvars"), reader.read)).toBe(true)
  })
})
