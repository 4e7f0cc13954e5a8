import { describe, expect, it } from "vitest"

import { modelIds } from "../../src/model/chat/ServerProbe"
import { listedModels } from "../../src/model/ServerWords"

describe("listedModels (the one reader of a /models answer)", () => {
  it("reads OpenAI's data[].id and Ollama's models[].name, each id once", () => {
    expect(listedModels({ object: "list", data: [{ id: "a" }, { id: "b" }, { id: "a" }] })).toEqual(["a", "b"])
    expect(listedModels({ models: [{ name: "llama3:8b" }, { model: "no name" }] })).toEqual(["llama3:8b"])
  })

  it("tells a list with no model from a body that is no list", () => {
    expect(listedModels({ data: [] })).toEqual([])
    expect(listedModels({ data: [{ id: "" }] })).toEqual([])
    expect(listedModels({ object: "list" })).toBeUndefined()
    expect(listedModels(null)).toBeUndefined()
    expect(listedModels([{ id: "a" }])).toBeUndefined()
    expect(modelIds({ object: "list" })).toEqual([])
  })
})
