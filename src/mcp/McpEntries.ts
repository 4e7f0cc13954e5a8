import * as path from "node:path"

import type { McpServerConfig } from "../config/McpConfig"
import type { SecretRegistry } from "../lib/Secrets"
import type { ServerEntry } from "./McpGroup"

const resolveAll = (
  values: Readonly<Record<string, string>>,
  secrets: SecretRegistry
): { readonly values: Record<string, string>; readonly missing: ReadonlyArray<string> } => {
  const out: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [key, value] of Object.entries(values)) {
    const resolved = secrets.resolveRefs(value)
    out[key] = resolved.value
    missing.push(...resolved.missing)
  }
  return { values: out, missing }
}

/** An agent.yaml entry: `${NAME}` read from the environment (and kept secret), cwd resolved against the project. */
export const entryFromConfig = (
  name: string,
  config: McpServerConfig,
  projectDir: string,
  secrets: SecretRegistry
): ServerEntry => {
  const common = { name, approval: config.approval, enabled: config.enabled }
  const resolved = "command" in config ? resolveAll(config.env, secrets) : resolveAll(config.headers, secrets)
  if (resolved.missing.length > 0) {
    const names = [...new Set(resolved.missing)]
    return { ...common, target: { kind: "invalid", reason: `environment variable ${names.join(", ")} is not set` } }
  }
  if ("command" in config) {
    return {
      ...common,
      target: {
        kind: "stdio",
        command: config.command,
        args: config.args,
        env: resolved.values,
        cwd: path.resolve(projectDir, config.cwd ?? ".")
      }
    }
  }
  secrets.registerUrl(config.url)
  return { ...common, target: { kind: "http", url: config.url, headers: resolved.values } }
}

/** The servers an editor gives in `session/new`, `session/load` or `session/resume`. */
export interface EditorServer {
  readonly name: string
  readonly command?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly url?: string
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

const secretLooking = /token|key|secret|pass|auth|cred|cookie/i

/**
 * An editor's entry. Header values, and environment values whose name looks like a
 * credential, are kept secret: never shown, saved or sent back.
 */
export const entryFromEditor = (server: EditorServer, cwd: string, secrets: SecretRegistry): ServerEntry => {
  const pairs = (list: EditorServer["env"]) => Object.fromEntries((list ?? []).map((p) => [p.name, p.value]))
  const common = { name: server.name, approval: "ask" as const, enabled: true }
  if (server.url !== undefined) {
    secrets.registerUrl(server.url)
    for (const header of server.headers ?? []) secrets.register(header.value)
    return { ...common, target: { kind: "http", url: server.url, headers: pairs(server.headers) } }
  }
  for (const variable of server.env ?? []) if (secretLooking.test(variable.name)) secrets.register(variable.value)
  if (server.command === undefined || server.command.trim() === "") {
    return { ...common, target: { kind: "invalid", reason: "no command and no url" } }
  }
  return {
    ...common,
    target: { kind: "stdio", command: server.command, args: server.args ?? [], env: pairs(server.env), cwd }
  }
}
