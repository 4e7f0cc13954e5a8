import { ThinkSplitter } from "../../src/model/chat/Reasoning"

/** An answer streamed in `pieces` through a ThinkSplitter: the text and the reasoning it separated. */
export const splitAll = (pieces: ReadonlyArray<string>) => {
  const splitter = new ThinkSplitter()
  let text = ""
  let reasoning = ""
  for (const piece of [...pieces.map((p) => splitter.push(p)), splitter.end()]) {
    text += piece.text
    reasoning += piece.reasoning
  }
  return { text, reasoning }
}
