import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { configInputs } from "../config/Config"
import { mergeConfigs } from "../config/ConfigMerge"
import { defaultConfig, PROVIDER_URLS } from "../config/ConfigSchema"
import { recordTrust } from "../config/TrustStore"
import { listedModels } from "../model/ServerWords"
import type { ExitCode } from "./Run"

/** The local servers `mm init` looks for, on 127.0.0.1 only. */
export const USUAL_SERVERS: ReadonlyArray<{ readonly port: number; readonly name: string }> = [
  { port: 11434, name: "Ollama" },
  { port: 8080, name: "llama.cpp" },
  { port: 1234, name: "LM Studio" },
  { port: 8000, name: "vLLM" }
]

/** A hosted API `mm init` can write: the protocol, its address, a model to start with and the key's variable. */
export interface Preset {
  readonly label: string
  readonly api: "chat" | "responses" | "anthropic"
  readonly url: string
  readonly model: string
  readonly apiKeyEnv: string
}

export const PRESETS: Readonly<Record<"openai" | "anthropic" | "openrouter", Preset>> = {
  anthropic: {
    label: "Anthropic",
    api: "anthropic",
    url: PROVIDER_URLS.anthropic,
    model: "claude-sonnet-4-5",
    apiKeyEnv: "ANTHROPIC_API_KEY"
  },
  openai: {
    label: "OpenAI",
    api: "responses",
    url: PROVIDER_URLS.responses,
    model: "gpt-5",
    apiKeyEnv: "OPENAI_API_KEY"
  },
  openrouter: {
    label: "OpenRouter",
    api: "chat",
    url: "https://openrouter.ai/api/v1",
    model: "qwen/qwen3-coder",
    apiKeyEnv: "OPENROUTER_API_KEY"
  }
}

export interface FoundServer {
  readonly url: string
  readonly name: string
  readonly models: ReadonlyArray<string>
}

/** The models a server lists at `GET {url}/models` (read by `listedModels`), or undefined when it does not answer so. */
export const listModels = async (url: string, timeoutMs = 1500): Promise<ReadonlyArray<string> | undefined> => {
  try {
    const response = await fetch(`${url.replace(/\/+$/, "")}/models`, { signal: AbortSignal.timeout(timeoutMs) })
    if (!response.ok) return undefined
    return listedModels(await response.json())
  } catch {
    return undefined
  }
}

/** Every usual local server that answers, with its models, in the order of `servers`. */
export const probeLocalServers = async (
  servers: ReadonlyArray<{ readonly port: number; readonly name: string }> = USUAL_SERVERS
): Promise<ReadonlyArray<FoundServer>> => {
  const found = await Promise.all(
    servers.map(async ({ port, name }) => {
      const url = `http://127.0.0.1:${port}/v1`
      const models = await listModels(url)
      return models === undefined ? undefined : { url, name, models }
    })
  )
  return found.filter((server): server is FoundServer => server !== undefined)
}

const yamlString = (
  value: string
) => (/^[\w./:@-]+$/.test(value) && !/^[\d.]+$/.test(value) ? value : JSON.stringify(value))

/** The lines of `model:` for a local server (chat completions, no key) or a hosted API. */
const modelLines = (url: string, model: string, preset: Preset | undefined): ReadonlyArray<string> =>
  preset === undefined
    ? [
      "  # any server that speaks the OpenAI chat-completions protocol (Ollama, llama.cpp, LM Studio, vLLM…)",
      `  url: ${yamlString(url)}`,
      `  name: ${yamlString(model)}`,
      // no default to show: the window is asked of the server
      "  # contextWindow: the tokens the model takes in, when the server does not say (automatic compaction starts near it)",
      "  # for a server that wants a key: the name of the environment variable that holds it",
      "  # apiKeyEnv: OPENAI_API_KEY"
    ]
    : [
      `  # ${preset.label}: api is the wire protocol (chat, responses or anthropic)`,
      `  api: ${preset.api}`,
      `  url: ${yamlString(url)}`,
      `  name: ${yamlString(model)}`,
      "  # the environment variable that holds the key (the key itself never goes in this file)",
      `  apiKeyEnv: ${preset.apiKeyEnv}`,
      ...(preset.api === "chat"
        ? []
        : ["  # think before answering: off, low, medium, high, or a budget in tokens", "  # thinking: medium"])
    ]

/** The `agent.yaml` that `mm init` writes: the model, sessions on, every other key commented. */
export const initYaml = (url: string, model: string, preset?: Preset): string => {
  const defaults = defaultConfig()
  return [
    "# mm's configuration for this project, written by `mm init`.",
    "# Every key is described in docs/reference/configuration.md; agent.schema.json lets an editor check this file.",
    "",
    "model:",
    ...modelLines(url, model, preset),
    "",
    "# ask before bash, write_file and edit_file run (allow: never ask)",
    `permissions: ${defaults.permissions}`,
    "",
    "sessions:",
    "  # every conversation is kept under .mm/sessions (its own .gitignore keeps .mm/ out of git):",
    "  # /resume or `mm --continue` to go on with one; false keeps none",
    "  enabled: true",
    "",
    "# seconds the model may stay silent before a turn is given up",
    `# watchdogTimeout: ${defaults.watchdogTimeout}`,
    "# model calls in one turn before mm stops and asks you",
    `# maxSteps: ${defaults.maxSteps}`,
    ""
  ].join("\n")
}

const say = (line: string) => process.stdout.write(`${line}\n`)

/**
 * The file `mm init` wrote is the user's doing: its settings that would wait for trust
 * (config/ProjectTrust.ts) are recorded as trusted, as they stand with the user's own
 * configuration under them. Nothing is recorded when a configuration cannot be read.
 */
export const trustWritten = (cwd: string): void => {
  const inputs = configInputs({ flag: undefined, env: undefined, cwd })
  if (Either.isLeft(inputs) || inputs.right.chosen === undefined) return
  const merged = mergeConfigs({ ...inputs.right, trustedHash: undefined })
  // nothing guarded: nothing to record
  const untrusted = Either.isRight(merged) ? merged.right.untrusted : undefined
  if (untrusted === undefined) return
  try {
    recordTrust(cwd, untrusted.file, untrusted.hash)
  } catch {
    // not remembered: the first start asks
  }
}

const fail = (line: string, code: ExitCode = 2) =>
  Effect.sync(() => {
    process.stderr.write(`mm init: ${line}\n`)
    return code
  })

/** What `mm init` writes: a model at a server, and the hosted API it is, if one. */
interface Chosen {
  readonly url: string
  readonly model: string
  readonly preset?: Preset
}

/** One line of the picker: a local server's model, or a hosted API. */
interface Choice extends Chosen {
  readonly label: string
  readonly hint: string
}

const hostedChoices: ReadonlyArray<Choice> = Object.values(PRESETS).map((preset) => ({
  url: preset.url,
  model: preset.model,
  preset,
  label: `${preset.label} (${preset.model})`,
  hint: `needs $${preset.apiKeyEnv}`
}))

/** On a terminal, a list to pick from; undefined when cancelled. */
const pick = async (choices: ReadonlyArray<Choice>): Promise<Choice | undefined> => {
  const { select, isCancel } = await import("@clack/prompts")
  const answer = await select({
    message: "Which model should mm use?",
    options: choices.map((c, i) => ({ value: i, label: c.label, hint: c.hint }))
  })
  return isCancel(answer) ? undefined : choices[answer]
}

const onTerminal = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/** The servers to choose among: the one `--url` names, or the usual local ports (said as found). */
const lookForServers = (url: string | undefined): Effect.Effect<ReadonlyArray<FoundServer>> =>
  url !== undefined
    ? Effect.promise(async () => [{ url, name: "the server", models: (await listModels(url)) ?? [] }])
    : Effect.tap(Effect.promise(() => probeLocalServers()), (servers) =>
      Effect.sync(() => {
        if (servers.length === 0) {
          say(`no model server answered on 127.0.0.1 (ports ${USUAL_SERVERS.map((s) => s.port).join(", ")})`)
        }
        for (const server of servers) say(`found ${server.name} at ${server.url}: ${server.models.length} model(s)`)
      }))

/**
 * The model to write when no hosted API was named: `--model`, the one model found, the user's
 * pick on a terminal (the hosted APIs offered too when mm looked for itself), else the default.
 */
const chooseLocal = (options: InitOptions) =>
  Effect.gen(function*() {
    const servers = yield* lookForServers(options.url)
    const found: ReadonlyArray<Choice> = servers.flatMap((server) =>
      server.models.map((model) => ({ url: server.url, model, label: model, hint: `${server.name} at ${server.url}` }))
    )
    if (options.model !== undefined) {
      const url = options.url ?? servers.find((s) => s.models.includes(options.model!))?.url ?? servers[0]?.url ??
        defaultConfig().model.url
      return { chosen: { url, model: options.model }, found: found.length > 0 }
    }
    if (found.length === 1) return { chosen: found[0], found: true }
    const offered = options.url === undefined && options.preset === undefined ? [...found, ...hostedChoices] : found
    if (offered.length > 1 && onTerminal()) {
      const picked = yield* Effect.promise(() => pick(offered))
      return picked === undefined ? undefined : { chosen: picked, found: picked.preset === undefined }
    }
    if (found.length > 1) {
      return `${found.length} models found (${found.map((c) => c.model).join(", ")}) — pick one with --model NAME`
    }
    const defaults = defaultConfig().model
    const chosen = { url: options.url ?? defaults.url, model: defaults.name }
    say(
      `no model listed: writing ${chosen.model} at ${chosen.url}; change model.url and model.name in agent.yaml if they are not right`
    )
    return { chosen, found: false }
  })

/** What to do once the file is written: the key to set, the server to start, or just run mm. */
const nextStep = (chosen: Chosen, found: boolean): string => {
  const key = chosen.preset?.apiKeyEnv
  if (key !== undefined) {
    return process.env[key] === undefined || process.env[key] === ""
      ? `next: export ${key}=<your key>, then run mm here`
      : "next: run mm here to start"
  }
  return found ? "next: run mm here to start" : `next: start a model server at ${chosen.url}, then run mm here`
}

interface InitOptions {
  readonly preset?: string
  readonly url?: string
  readonly model?: string
  readonly force: boolean
}

/**
 * `mm init`: writes a commented `agent.yaml` for a hosted API (`--preset`), or finds a model
 * server (the usual local ports, or `--url`) and lets the user pick a model (or takes
 * `--model`). The project's `.gitignore` is left alone: the `.mm/` mm makes at the first
 * question holds a `.gitignore` of its own (lib/ProjectDir.ts). An existing `agent.yaml` is
 * replaced only with `--force`.
 */
export const initProject = (options: InitOptions, cwd = process.cwd()) =>
  Effect.gen(function*() {
    const target = path.join(cwd, "agent.yaml")
    if (fs.existsSync(target) && !options.force) {
      return yield* fail(`${target} already exists — pass --force to replace it`)
    }
    if (options.url !== undefined && !/^https?:\/\/[^\s/]+/.test(options.url)) {
      return yield* fail(`--url expects an http:// or https:// URL, got ${JSON.stringify(options.url)}`)
    }
    const hosted = options.preset === undefined || options.preset === "local"
      ? undefined
      : PRESETS[options.preset as keyof typeof PRESETS]
    const outcome = hosted !== undefined
      ? {
        chosen: { url: options.url ?? hosted.url, model: options.model ?? hosted.model, preset: hosted },
        found: false
      }
      : yield* chooseLocal(options)
    if (outcome === undefined) return yield* fail("nothing written", 130)
    if (typeof outcome === "string") return yield* fail(outcome)
    const chosen: Chosen = outcome.chosen
    const found = outcome.found
    yield* Effect.sync(() => {
      fs.writeFileSync(target, initYaml(chosen.url, chosen.model, chosen.preset))
      trustWritten(cwd)
    })
    const api = chosen.preset === undefined ? "" : ` (${chosen.preset.label})`
    say(`wrote ${target} — model ${chosen.model} at ${chosen.url}${api}, sessions on`)
    // the last line is what to do next
    say(nextStep(chosen, found))
    return 0
  })
