import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { configInputs } from "../config/Config"
import { mergeConfigs } from "../config/ConfigMerge"
import { defaultConfig } from "../config/ConfigSchema"
import { recordTrust } from "../config/TrustStore"
import { listedModels } from "../model/chat/ServerProbe"
import type { ExitCode } from "./Run"

/** The local servers `mm init` looks for, on 127.0.0.1 only. */
export const USUAL_SERVERS: ReadonlyArray<{ readonly port: number; readonly name: string }> = [
  { port: 11434, name: "Ollama" },
  { port: 8080, name: "llama.cpp" },
  { port: 1234, name: "LM Studio" },
  { port: 8000, name: "vLLM" }
]

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

/** The `agent.yaml` that `mm init` writes: the model, sessions on, every other key commented. */
export const initYaml = (url: string, model: string): string => {
  const defaults = defaultConfig()
  return [
    "# mm's configuration for this project, written by `mm init`.",
    "# Every key is described in docs/reference/configuration.md; agent.schema.json lets an editor check this file.",
    "",
    "model:",
    "  # any server that speaks the OpenAI chat-completions protocol (Ollama, llama.cpp, LM Studio, vLLM…)",
    `  url: ${yamlString(url)}`,
    `  name: ${yamlString(model)}`,
    // no default to show: the window is asked of the server
    "  # contextWindow: the tokens the model takes in, when the server does not say (automatic compaction starts near it)",
    "  # for a server that wants a key: the name of the environment variable that holds it",
    "  # apiKeyEnv: OPENAI_API_KEY",
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

/** On a terminal, a list of the models found to pick from; undefined when cancelled. */
const pickModel = async (
  choices: ReadonlyArray<{ readonly url: string; readonly server: string; readonly model: string }>
) => {
  const { select, isCancel } = await import("@clack/prompts")
  const answer = await select({
    message: "Which model should mm use?",
    options: choices.map((c, i) => ({ value: i, label: c.model, hint: `${c.server} at ${c.url}` }))
  })
  return isCancel(answer) ? undefined : choices[answer]
}

/**
 * `mm init`: finds a model server (the usual local ports, or `--url`), lets the user pick a
 * model (or takes `--model`), and writes a commented `agent.yaml` with sessions on. The
 * project's `.gitignore` is left alone: the `.mm/` mm makes at the first question holds a
 * `.gitignore` of its own (lib/ProjectDir.ts). An existing `agent.yaml` is replaced only with
 * `--force`.
 */
export const initProject = (
  options: { readonly url?: string; readonly model?: string; readonly force: boolean },
  cwd = process.cwd()
) =>
  Effect.gen(function*() {
    const target = path.join(cwd, "agent.yaml")
    if (fs.existsSync(target) && !options.force) {
      return yield* fail(`${target} already exists — pass --force to replace it`)
    }
    if (options.url !== undefined && !/^https?:\/\/[^\s/]+/.test(options.url)) {
      return yield* fail(`--url expects an http:// or https:// URL, got ${JSON.stringify(options.url)}`)
    }

    const servers: ReadonlyArray<FoundServer> = options.url !== undefined
      ? yield* Effect.promise(async () => {
        const models = await listModels(options.url!)
        return [{ url: options.url!, name: "the server", models: models ?? [] }]
      })
      : yield* Effect.promise(() => probeLocalServers())
    if (options.url === undefined) {
      if (servers.length === 0) {
        say(`no model server answered on 127.0.0.1 (ports ${USUAL_SERVERS.map((s) => s.port).join(", ")})`)
      }
      for (const server of servers) say(`found ${server.name} at ${server.url}: ${server.models.length} model(s)`)
    }

    const choices = servers.flatMap((server) =>
      server.models.map((model) => ({ url: server.url, server: server.name, model }))
    )
    let chosen: { readonly url: string; readonly model: string }
    if (options.model !== undefined) {
      chosen = {
        url: options.url ?? servers.find((s) => s.models.includes(options.model!))?.url ?? servers[0]?.url ??
          defaultConfig().model.url,
        model: options.model
      }
    } else if (choices.length === 1) {
      chosen = choices[0]
    } else if (choices.length > 1 && process.stdin.isTTY === true && process.stderr.isTTY === true) {
      const picked = yield* Effect.promise(() => pickModel(choices))
      if (picked === undefined) return yield* fail("nothing written", 130)
      chosen = picked
    } else if (choices.length > 1) {
      return yield* fail(
        `${choices.length} models found (${choices.map((c) => c.model).join(", ")}) — pick one with --model NAME`
      )
    } else {
      const defaults = defaultConfig().model
      chosen = { url: options.url ?? defaults.url, model: defaults.name }
      say(
        `no model listed: writing ${chosen.model} at ${chosen.url}; change model.url and model.name in agent.yaml if they are not right`
      )
    }

    yield* Effect.sync(() => {
      fs.writeFileSync(target, initYaml(chosen.url, chosen.model))
      trustWritten(cwd)
    })
    say(`wrote ${target} — model ${chosen.model} at ${chosen.url}, sessions on`)
    // the last line is what to do next
    say(
      choices.length > 0
        ? "next: run mm here to start"
        : `next: start a model server at ${chosen.url}, then run mm here`
    )
    return 0
  })
