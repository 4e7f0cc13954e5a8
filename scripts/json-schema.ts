import * as JSONSchema from "effect/JSONSchema"

import { AgentConfigSchema, defaultConfig, keyDescriptions } from "../src/config/ConfigSchema"

type Node = { properties?: Record<string, Node>; description?: string; default?: unknown; [key: string]: unknown }

/** Adds each key's description and default, found by its dotted path. */
const annotate = (node: Node, prefix: string, defaults: unknown): void => {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const keyPath = prefix === "" ? key : `${prefix}.${key}`
    const value = (defaults as Record<string, unknown> | undefined)?.[key]
    if (keyDescriptions[keyPath] !== undefined) child.description = keyDescriptions[keyPath]
    if (value !== undefined && typeof value !== "object" && keyPath !== "system") child.default = value
    if (Array.isArray(value)) child.default = value
    annotate(child, keyPath, value)
  }
}

// a copy: a schema used by two keys (Seconds) is one shared object in what JSONSchema.make returns
const schema = JSON.parse(JSON.stringify(JSONSchema.make(AgentConfigSchema))) as Node
annotate(schema, "", defaultConfig())
process.stdout.write(
  JSON.stringify({ ...schema, $id: "https://mm.invalid/agent.schema.json", title: "mm agent.yaml" }, null, 2) + "\n"
)
