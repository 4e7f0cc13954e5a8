/**
 * The settings of a project's own agent.yaml that wait for the user's trust (SPEC §14, the
 * third layer): those that would run a program (MCP servers, hooks), lower the guard (`permissions`,
 * a looser `sandbox`) or send the user's key somewhere (`model.url`, `model.apiKeyEnv`,
 * `model.headers` naming a variable, when the configuration would send a key). Each is found
 * in the file's own values (as written, before defaults), compared with the user's settings:
 * a project that asks for no more than the user already allows asks nothing.
 *
 * Pure, and loaded only when a configuration is decoded (ConfigMerge.ts), with `node:crypto`
 * for the hash that names what was trusted.
 */
import { isRecord } from "../lib/Guards"
import { nodeCrypto } from "../lib/NodeModules"
import type { AgentConfig } from "./ConfigSchema"

/** One guarded setting of the project's file. */
export interface GuardedSetting {
  /** Where it is in the file: `["mcpServers", "ghost"]`, `["sandbox", "mode"]`. */
  readonly path: ReadonlyArray<string>
  /** Its value as the file writes it. */
  readonly value: unknown
  /** A few words for the line that says it was ignored: `permissions: allow`. */
  readonly short: string
  /** What it would do, for the question: the command with its arguments, the URL and the variable. */
  readonly effect: string
}

type Raw = Record<string, unknown>

const PERMISSION_RANK: Record<string, number> = { ask: 0, auto: 1, allow: 2 }
/** How strict a sandbox mode is: `auto` runs unconfined where bubblewrap cannot start, so it is looser than `on`. */
const SANDBOX_STRICTNESS: Record<string, number> = { off: 0, auto: 1, on: 2 }

/** `sandbox: off` written as the map it stands for, so that both forms merge and compare alike. */
export const normalized = (raw: Raw): Raw =>
  typeof raw.sandbox === "string" ? { ...raw, sandbox: { mode: raw.sandbox } } : raw

const quoted = (word: string): string => (/^[\w./:@%+=,-]+$/.test(word) ? word : JSON.stringify(word))

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

const variablesIn = (value: unknown): Array<string> =>
  typeof value === "string" ? [...value.matchAll(VARIABLE)].map((match) => match[1]) : []

/** The variables a configuration sends to its model server: `apiKeyEnv` and those its headers name. */
export const keysSent = (config: AgentConfig): Array<string> => [
  ...new Set([
    ...(config.model.apiKeyEnv === undefined ? [] : [config.model.apiKeyEnv]),
    ...Object.values(config.model.headers ?? {}).flatMap(variablesIn)
  ])
]

const dollars = (names: ReadonlyArray<string>): string => names.map((name) => `$${name}`).join(", ")

const mcpSettings = (project: Raw): Array<GuardedSetting> => {
  const servers = isRecord(project.mcpServers) ? project.mcpServers : {}
  return Object.entries(servers).flatMap(([name, entry]): Array<GuardedSetting> => {
    if (!isRecord(entry) || entry.enabled === false) return []
    const path = ["mcpServers", name]
    if (typeof entry.command === "string") {
      const args = Array.isArray(entry.args) ? entry.args.map(String) : []
      const line = [entry.command, ...args].map(quoted).join(" ")
      const env = isRecord(entry.env) ? Object.keys(entry.env) : []
      return [{
        path,
        value: entry,
        short: `an MCP server (${name}: ${entry.command})`,
        effect: `start the MCP server ${name}: ${line}` +
          (typeof entry.cwd === "string" ? ` (in ${entry.cwd})` : "") +
          (env.length === 0 ? "" : ` with ${env.join(", ")} set`)
      }]
    }
    const sent = isRecord(entry.headers) ? Object.values(entry.headers).flatMap(variablesIn) : []
    const receives = sent.length === 0 ? "" : ` (would receive ${dollars(sent)})`
    return [{
      path,
      value: entry,
      short: `an MCP server (${name}: ${String(entry.url)}${receives})`,
      effect: `connect to the MCP server ${name} at ${String(entry.url)}${
        sent.length === 0 ? "" : `, sending ${dollars(sent)}`
      }`
    }]
  })
}

/**
 * The project's hooks: each command it would run at an event, unless the user's own file runs
 * the same command there already. Trusting them trusts the event's whole list as written.
 */
const hookSettings = (project: Raw, user: AgentConfig): Array<GuardedSetting> => {
  const hooks = isRecord(project.hooks) ? project.hooks : {}
  return Object.entries(hooks).flatMap(([event, groups]): Array<GuardedSetting> => {
    if (!Array.isArray(groups)) return []
    const own = new Set(
      (user.hooks[event as keyof AgentConfig["hooks"]] ?? []).flatMap((group) =>
        group.hooks.map((hook) => hook.command)
      )
    )
    return groups.flatMap((group) => {
      if (!isRecord(group) || !Array.isArray(group.hooks)) return []
      const matcher = typeof group.matcher === "string" && group.matcher.trim() !== "" ? ` (${group.matcher})` : ""
      return group.hooks.flatMap((hook): Array<GuardedSetting> => {
        if (!isRecord(hook) || typeof hook.command !== "string" || own.has(hook.command.trim())) return []
        return [{
          path: ["hooks", event],
          value: groups,
          short: `a hook (${event}: ${hook.command})`,
          effect: `run the hook command at ${event}${matcher}, as you, outside the sandbox: ${hook.command}`
        }]
      })
    })
  })
}

const permissionSettings = (project: Raw, user: AgentConfig): Array<GuardedSetting> => {
  const wanted = project.permissions
  if (typeof wanted !== "string" || (PERMISSION_RANK[wanted] ?? 0) <= PERMISSION_RANK[user.permissions]) return []
  const effect = wanted === "allow"
    ? "permissions: allow — every tool call runs without asking"
    : "permissions: auto — commands run in the sandbox and edits in the project go ahead without asking"
  return [{ path: ["permissions"], value: wanted, short: `permissions: ${wanted}`, effect }]
}

const newEntries = (list: unknown, user: ReadonlyArray<string>): boolean =>
  Array.isArray(list) && list.some((entry) => !user.includes(String(entry)))

const limitSettings = (limits: unknown, user: AgentConfig): Array<GuardedSetting> => {
  if (!isRecord(limits)) return []
  return (["processes", "fileSize"] as const).flatMap((name): Array<GuardedSetting> => {
    const value = limits[name]
    if (typeof value !== "number" || value <= user.sandbox.limits[name]) return []
    const unit = name === "processes" ? "processes at once" : "MiB per file"
    return [{
      path: ["sandbox", "limits", name],
      value,
      short: `sandbox.limits.${name}: ${value}`,
      effect: `sandbox.limits.${name}: ${value} — confined commands may use up to ${value} ${unit}`
    }]
  })
}

const sandboxSettings = (project: Raw, user: AgentConfig): Array<GuardedSetting> => {
  const sandbox = project.sandbox
  if (!isRecord(sandbox)) return []
  const found: Array<GuardedSetting> = []
  const mode = sandbox.mode
  if (typeof mode === "string" && (SANDBOX_STRICTNESS[mode] ?? 2) < SANDBOX_STRICTNESS[user.sandbox.mode]) {
    const effect = mode === "off"
      ? "sandbox: off — bash commands run unconfined, as you"
      : "sandbox: auto — bash commands run unconfined where bubblewrap cannot start"
    found.push({ path: ["sandbox", "mode"], value: mode, short: `sandbox: ${mode}`, effect })
  }
  if (sandbox.network === true && !user.sandbox.network) {
    const effect = "sandbox.network: true — confined commands may reach the network"
    found.push({ path: ["sandbox", "network"], value: true, short: "sandbox.network: true", effect })
  }
  if (newEntries(sandbox.writable, user.sandbox.writable)) {
    const list = (sandbox.writable as Array<unknown>).map(String).join(", ")
    found.push({
      path: ["sandbox", "writable"],
      value: sandbox.writable,
      short: `sandbox.writable: ${list}`,
      effect: `sandbox.writable — confined commands may also write ${list}`
    })
  }
  if (newEntries(sandbox.env, user.sandbox.env)) {
    const list = (sandbox.env as Array<unknown>).map(String).join(", ")
    found.push({
      path: ["sandbox", "env"],
      value: sandbox.env,
      short: `sandbox.env: ${list}`,
      effect: `sandbox.env — confined commands would see ${list}`
    })
  }
  return [...found, ...limitSettings(sandbox.limits, user)]
}

/**
 * The project's model settings that decide where a key goes, when the configuration (`merged`:
 * the user's with the whole project file over it) would send one.
 */
const modelSettings = (project: Raw, user: AgentConfig, merged: AgentConfig): Array<GuardedSetting> => {
  const model = project.model
  const sent = keysSent(merged)
  if (!isRecord(model) || sent.length === 0) return []
  const found: Array<GuardedSetting> = []
  if (typeof model.url === "string" && model.url !== user.model.url) {
    found.push({
      path: ["model", "url"],
      value: model.url,
      short: `model.url (would receive ${dollars(sent)})`,
      effect: `model.url — send ${dollars(sent)} to ${model.url}`
    })
  }
  // another API with no url written moves the key to that provider's own address
  if (typeof model.api === "string" && model.api !== user.model.api && merged.model.url !== user.model.url) {
    found.push({
      path: ["model", "api"],
      value: model.api,
      short: `model.api: ${model.api} (would send ${dollars(sent)} to ${merged.model.url})`,
      effect: `model.api — send ${dollars(sent)} to ${merged.model.url}`
    })
  }
  if (typeof model.apiKeyEnv === "string" && model.apiKeyEnv !== user.model.apiKeyEnv) {
    found.push({
      path: ["model", "apiKeyEnv"],
      value: model.apiKeyEnv,
      short: `model.apiKeyEnv: ${model.apiKeyEnv}`,
      effect: `model.apiKeyEnv — send $${model.apiKeyEnv} to ${merged.model.url}`
    })
  }
  const headers = isRecord(model.headers) ? model.headers : {}
  for (const [name, value] of Object.entries(headers)) {
    const names = variablesIn(value)
    if (names.length === 0 || user.model.headers?.[name] === value) continue
    found.push({
      path: ["model", "headers", name],
      value,
      short: `model.headers.${name} (${dollars(names)})`,
      effect: `model.headers.${name} — send ${dollars(names)} to ${merged.model.url}`
    })
  }
  return found
}

/**
 * The guarded settings of a project's file (`project`: its values as written, normalized),
 * given the user's own configuration and the configuration the whole file would give.
 */
export const guardedSettings = (project: Raw, user: AgentConfig, merged: AgentConfig): Array<GuardedSetting> => [
  ...mcpSettings(project),
  ...hookSettings(project, user),
  ...permissionSettings(project, user),
  ...sandboxSettings(project, user),
  ...modelSettings(project, user, merged)
]

/** The project's values without the guarded ones (each removed where it is; the maps around them stay). */
export const withoutGuarded = (project: Raw, settings: ReadonlyArray<GuardedSetting>): Raw => {
  const copy = structuredClone(project)
  for (const setting of settings) {
    let holder: unknown = copy
    for (const key of setting.path.slice(0, -1)) holder = isRecord(holder) ? holder[key] : undefined
    if (isRecord(holder)) delete holder[setting.path[setting.path.length - 1]]
  }
  return copy
}

/** JSON with every map's keys sorted: one text for one set of values, whatever the order they were written in. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (isRecord(value)) {
    const keys = Object.keys(value).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** What names a set of guarded settings in the trust store: the sha256 of their paths and values. */
export const guardHash = (settings: ReadonlyArray<GuardedSetting>): string => {
  const entries = settings.map((setting) => ({ path: setting.path, value: setting.value }))
    .sort((a, b) => (a.path.join("\0") < b.path.join("\0") ? -1 : 1))
  return nodeCrypto().createHash("sha256").update(canonicalJson(entries)).digest("hex")
}

/** The one line that says what was left out, and how to have it. */
export const ignoredLine = (shown: string, settings: ReadonlyArray<GuardedSetting>): string =>
  `ignored from ${shown} until you trust it: ${
    settings.map((setting) => setting.short).join(", ")
  } — run mm in this project to review them, or pass --trust`

/** What the question shows before it asks: one line per setting, saying what it would do. */
export const questionLines = (shown: string, settings: ReadonlyArray<GuardedSetting>): Array<string> => [
  `${shown} is this project's configuration. These settings of it apply only once you trust it:`,
  ...settings.map((setting) => `  - ${setting.effect}`)
]

/** A project's guarded settings not trusted yet: what was left out, and the configuration that holds them. */
export interface UntrustedSettings {
  /** The project (the working directory the file was found from), its file, and how it is shown (`./agent.yaml`). */
  readonly project: string
  readonly file: string
  readonly shown: string
  /** What the trust store keeps once they are trusted (`guardHash`). */
  readonly hash: string
  readonly settings: ReadonlyArray<GuardedSetting>
  /** The configuration with them: what applies once they are trusted. */
  readonly trusted: AgentConfig
}
