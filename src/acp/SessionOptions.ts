import type * as acp from "@agentclientprotocol/sdk"

import { type ApprovalMode, approvalModes, type SessionSettings } from "../approvals/SessionSettings"

export const MODE_OPTION = "mode"
export const MODEL_OPTION = "model"

const modeInfo: Record<ApprovalMode, { readonly name: string; readonly description: string }> = {
  ask: { name: "Ask", description: "Ask before a command or a file edit, as permissions in agent.yaml says" },
  edits: {
    name: "Edits",
    description: "File edits inside the project go ahead; commands and edits elsewhere are asked"
  },
  auto: {
    name: "Auto",
    description:
      "Commands run in the sandbox and file edits inside the project go ahead; anything else is asked (as Ask without a sandbox)"
  },
  allow: { name: "Allow", description: "Nothing is asked" },
  plan: {
    name: "Plan",
    description: "The model plans: only what reads runs (files, searches, read-only commands); nothing is changed"
  }
}

export const modeState = (settings: SessionSettings): acp.SessionModeState => ({
  currentModeId: settings.mode,
  availableModes: approvalModes.map((id) => ({ id, ...modeInfo[id] }))
})

/** The configured model first, then the others the server lists. */
export const modelChoices = (configured: string, listed: ReadonlyArray<string>): ReadonlyArray<string> => [
  configured,
  ...listed.filter((id) => id !== configured)
]

export const configOptions = (
  settings: SessionSettings,
  models: ReadonlyArray<string>
): Array<acp.SessionConfigOption> => [
  {
    id: MODE_OPTION,
    name: "Mode",
    description: "How much mm asks before a tool runs",
    category: "mode",
    type: "select",
    currentValue: settings.mode,
    options: approvalModes.map((id) => ({ value: id, ...modeInfo[id] }))
  },
  {
    id: MODEL_OPTION,
    name: "Model",
    description: "The model the next requests go to",
    category: "model",
    type: "select",
    currentValue: settings.model ?? models[0],
    options: models.map((id, i) => ({
      value: id,
      name: id,
      ...(i === 0 ? { description: "as configured in agent.yaml" } : {})
    }))
  }
]
