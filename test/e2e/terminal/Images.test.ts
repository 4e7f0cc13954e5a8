// Images in the terminal: `@shot.png` reaches a model that can see as an `image_url` part,
// is kept as a checkpoint blob, and is said not to be sent to a model that cannot.
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, tempProject, withSessions } from "../../support/MmProcess"
import { SERVER_FIXTURES } from "../../support/paths"

// the smallest PNG there is: one transparent pixel
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64"
)

const seeing = (url: string, vision: boolean | undefined) =>
  withSessions(url).flatMap((line) =>
    line === "  name: fake-model" && vision !== undefined ? [line, `  vision: ${vision}`] : [line]
  )

const withShot = (yaml: ReadonlyArray<string>) => {
  const project = tempProject(yaml)
  fs.writeFileSync(path.join(project, "shot.png"), PNG)
  return project
}

describe("images in the terminal", () => {
  it("model.vision: true — the image goes as an image_url data URL, and is kept as a blob", async () => {
    const server = await startFakeModelServer({ steps: [{ text: "A single pixel." }] })
    try {
      const project = withShot(seeing(server.url, true))
      const { stdout, code } = await runMm(project, ["what is in @shot.png?"])
      expect(stdout).toContain("A single pixel.")
      expect(code).toBe(0)
      const question = server.completions()[0].body.messages.at(-1)
      expect(question).toEqual({
        role: "user",
        content: [
          { type: "text", text: "what is in @shot.png?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } }
        ]
      })
      const hash = crypto.createHash("sha256").update(PNG).digest("hex")
      const stored = readSession(project, sessionFiles(project)[0]).messages.find((m: { role: string }) =>
        m.role === "user"
      )
      // the session file names the blob, and stays readable
      expect(stored).toEqual({
        role: "user",
        content: "what is in @shot.png?",
        images: [{ blob: hash, mime: "image/png", name: "shot.png" }]
      })
      expect(fs.readFileSync(path.join(project, ".mm/checkpoints", hash))).toEqual(PNG)
    } finally {
      await server.close()
    }
  })

  it("llama-server's /props modalities.vision: true is enough", async () => {
    const props = JSON.parse(fs.readFileSync(path.join(SERVER_FIXTURES, "llama.cpp", "props-vision.json"), "utf8"))
    const server = await startFakeModelServer({ routes: { "GET /props": { body: props } }, steps: [{ text: "ok" }] })
    try {
      const { code } = await runMm(withShot(seeing(server.url, undefined)), ["look: @shot.png"])
      expect(code).toBe(0)
      const content = server.completions()[0].body.messages.at(-1).content
      expect(content[1].type).toBe("image_url")
    } finally {
      await server.close()
    }
  })

  it("a model that cannot see: one line says the image was not sent, and the model reads a note", async () => {
    const server = await startFakeModelServer({ steps: [{ text: "I cannot see it." }] })
    try {
      const { stderr, code } = await runMm(withShot(seeing(server.url, undefined)), ["what is in @shot.png?"])
      expect(code).toBe(0)
      expect(stderr).toMatch(
        /^shot\.png: not sent — fake-model cannot see images \(set model\.vision: true in agent\.yaml if it can\)$/m
      )
      const question = server.completions()[0].body.messages.at(-1)
      expect(question.content).toBe(
        "what is in @shot.png?\n\n[an image (shot.png) attached by the user could not be shown to you: this model cannot see images]"
      )
    } finally {
      await server.close()
    }
  })
})
