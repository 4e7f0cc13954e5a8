import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { AgentConfigSchema } from "../src/Config"

const schema = JSONSchema.make(Schema.encodedSchema(AgentConfigSchema))
process.stdout.write(JSON.stringify({ ...schema, $id: "https://mm.invalid/agent.schema.json" }, null, 2) + "\n")
