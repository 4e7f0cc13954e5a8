import { describe, expect, it } from "vitest"

import {
  ask,
  completed,
  initialLineState,
  type Key,
  leave,
  LEAVE_HINT,
  LEAVE_WINDOW_MS,
  type LineEffect,
  type LineState,
  promptOf,
  shownOf,
  step
} from "../../src/terminal/LineState"

const DRAW: LineEffect = { _tag: "Draw" }

/** A prompt is shown, with `text` typed and the cursor at `cursor` (its end by default). */
const at = (text: string, cursor = text.length): LineState => ({ ...initialLineState, prompt: "> ", text, cursor })

/** No prompt is shown (a turn runs), with `text` typed ahead. */
const ahead = (text: string, cursor = text.length): LineState => ({ ...at(text, cursor), prompt: undefined })

/** A key as readline names it; a one-character string is that character typed. */
type Press = string | (Key & { readonly typed?: string })

const pressOf = (press: Press, now: number) =>
  typeof press === "string"
    ? { key: { name: press.length === 1 ? press.toLowerCase() : undefined, sequence: press }, typed: press, now }
    : { key: press, typed: press.typed, now }

/** The state after `presses`, and the effects of the last one. */
const keys = (
  state: LineState,
  presses: ReadonlyArray<Press>,
  history: ReadonlyArray<string> = [],
  now = 100_000
) => {
  let effects: ReadonlyArray<LineEffect> = []
  for (const press of presses) {
    const next = step(state, pressOf(press, now), history)
    state = next.state
    effects = next.effects
  }
  return { state, effects }
}

const typing = (text: string): Array<Press> => [...text]
const ctrl = (name: string): Press => ({ name, ctrl: true })
const meta = (name: string): Press => ({ name, meta: true })
const named = (name: string): Press => ({ name })

describe("typing and moving", () => {
  it("typing inserts at the cursor and asks for a redraw", () => {
    const { effects, state } = keys(at("ac", 1), ["b"])
    expect(state.text).toBe("abc")
    expect(state.cursor).toBe(2)
    expect(effects).toEqual([DRAW])
  })

  it("control characters and Ctrl/Alt chords that edit nothing are ignored", () => {
    const start = at("abc")
    const { effects, state } = keys(start, [{ name: "x", ctrl: true, typed: "\u0018" }, "\u007f", meta("z")])
    expect(state).toEqual(start)
    expect(effects).toEqual([])
  })

  it("Left, Right, Home, End and their Ctrl keys move within the line, never past its ends", () => {
    expect(keys(at("abc"), [named("left"), named("left")]).state.cursor).toBe(1)
    expect(keys(at("abc", 0), [named("left"), ctrl("b")]).state.cursor).toBe(0)
    expect(keys(at("abc", 1), [named("right"), ctrl("f"), named("right")]).state.cursor).toBe(3)
    expect(keys(at("abc", 2), [named("home")]).state.cursor).toBe(0)
    expect(keys(at("abc", 2), [ctrl("a"), ctrl("e")]).state.cursor).toBe(3)
    expect(keys(at("abc", 1), [named("end")]).effects).toEqual([DRAW])
  })

  it("Home and End stop at the ends of the line the cursor is on, in a question of several lines", () => {
    const text = "one\ntwo\nthree"
    expect(keys(at(text, 6), [named("home")]).state.cursor).toBe(4)
    expect(keys(at(text, 5), [named("end")]).state.cursor).toBe(7)
  })

  it("Backspace, Ctrl-H, Delete and Ctrl-D delete around the cursor", () => {
    expect(keys(at("abc", 2), [named("backspace")]).state).toMatchObject({ text: "ac", cursor: 1 })
    expect(keys(at("abc", 2), [ctrl("h")]).state).toMatchObject({ text: "ac", cursor: 1 })
    expect(keys(at("abc", 0), [named("backspace")])).toEqual({ state: at("abc", 0), effects: [DRAW] })
    expect(keys(at("abc", 1), [named("delete")]).state).toMatchObject({ text: "ac", cursor: 1 })
    expect(keys(at("abc", 1), [ctrl("d")])).toEqual({ state: at("ac", 1), effects: [DRAW] })
  })

  it("Ctrl-U deletes to the start of the line, Ctrl-K to its end", () => {
    expect(keys(at("one\ntwo three", 8), [ctrl("u")]).state).toMatchObject({ text: "one\nthree", cursor: 4 })
    expect(keys(at("one two\nthree", 3), [ctrl("k")]).state).toMatchObject({ text: "one\nthree", cursor: 3 })
  })

  it("Ctrl-W and Alt-Backspace delete the word before the cursor; with none, nothing is drawn", () => {
    expect(keys(at("git commit  "), [ctrl("w")]).state).toMatchObject({ text: "git ", cursor: 4 })
    expect(keys(at("git commit -m", 7), [meta("backspace")]).state).toMatchObject({ text: "git mit -m", cursor: 4 })
    expect(keys(at("  ", 2), [ctrl("w")])).toEqual({ state: at("  ", 2), effects: [] })
  })

  it("Alt-B/Ctrl-Left and Alt-F/Ctrl-Right move by words", () => {
    expect(keys(at("one two three"), [meta("b")]).state.cursor).toBe(8)
    expect(keys(at("one two three"), [ctrl("left"), ctrl("left")]).state.cursor).toBe(4)
    expect(keys(at("one"), [meta("b"), meta("b")]).state.cursor).toBe(0)
    expect(keys(at("one two three", 0), [meta("f")]).state.cursor).toBe(4)
    expect(keys(at("one two three", 0), [ctrl("right"), ctrl("right"), ctrl("right")]).state.cursor).toBe(13)
  })

  it("Backspace, Delete, Left and Right treat an emoji, a CJK character or a combining sequence as one", () => {
    expect(keys(at("編集テスト😀"), [named("backspace")]).state).toMatchObject({ text: "編集テスト", cursor: 5 })
    expect(keys(at("a👍🏽b", 1), [named("delete")]).state.text).toBe("ab")
    const family = "👨‍👩‍👧"
    expect(keys(at(`x${family}`), [named("left")]).state.cursor).toBe(1)
    expect(keys(at(`x${family}`, 1), [named("right")]).state.cursor).toBe(1 + family.length)
    expect(keys(at("cafe\u0301!", 6), [named("left"), named("backspace")]).state.text).toBe("caf!")
    expect(keys(at("日本"), [named("left"), ctrl("h")]).state).toMatchObject({ text: "本", cursor: 0 })
  })

  it("Ctrl-L clears the screen and draws again", () => {
    expect(keys(at("abc"), [ctrl("l")])).toEqual({ state: at("abc"), effects: [{ _tag: "ClearScreen" }, DRAW] })
  })
})

describe("several lines", () => {
  it("Alt-Enter, Enter's other name and Ctrl-J add a line at the cursor", () => {
    expect(keys(at("ab", 1), [{ name: "return", meta: true }]).state).toMatchObject({ text: "a\nb", cursor: 2 })
    expect(keys(at("ab"), [named("enter")]).state.text).toBe("ab\n")
    expect(keys(at("ab"), [ctrl("j")]).state.text).toBe("ab\n")
  })

  it("Enter after a trailing backslash, at the end, adds a line instead of sending", () => {
    expect(keys(at("one \\"), [named("return")])).toEqual({ state: at("one \n"), effects: [DRAW] })
    expect(keys(at("one \\", 2), [named("return")]).effects.at(-1)).toEqual({ _tag: "Deliver", line: "one \\" })
  })

  it("Up and Down move between the lines, keeping the column where the line is long enough", () => {
    const text = "first line\nab\nthird line"
    expect(keys(at(text, 1), [named("down")]).state.cursor).toBe(12)
    expect(keys(at(text, 1), [named("down"), ctrl("n")]).state.cursor).toBe(15)
    expect(keys(at(text, 20), [named("up")]).state.cursor).toBe(13)
    expect(keys(at(text, 20), [named("up"), ctrl("p")]).state.cursor).toBe(2)
  })

  it("Up on the first line and Down on the last go to history", () => {
    expect(keys(at("one\ntwo", 1), [named("up")], ["before"]).state).toMatchObject({ text: "before", historyAt: 0 })
    expect(keys(at("one\ntwo", 5), [named("down")], ["before"]).state).toEqual(at("one\ntwo", 5))
  })
})

describe("history", () => {
  const history = ["oldest", "middle", "newest"]

  it("Up goes back through history from the newest, keeping the line typed; Down brings it back", () => {
    const up = keys(at("draft"), [named("up")], history).state
    expect(up).toMatchObject({ text: "newest", cursor: 6, historyAt: 2, draftBeforeHistory: "draft" })
    const older = keys(up, [named("up"), named("up"), named("up")], history).state
    expect(older).toMatchObject({ text: "oldest", historyAt: 0 })
    const back = keys(older, [named("down"), named("down"), named("down")], history).state
    expect(back).toMatchObject({ text: "draft", cursor: 5, historyAt: undefined })
  })

  it("Down on the line typed, or Up with no history, changes nothing", () => {
    expect(keys(at("draft"), [named("down")], history).state).toEqual(at("draft"))
    expect(keys(at("draft"), [named("up")], []).state).toEqual(at("draft"))
  })

  it("typing leaves history: the next Up starts from the newest again", () => {
    const edited = keys(at(""), [named("up"), named("up"), "!"], history).state
    expect(edited).toMatchObject({ text: "middle!", historyAt: undefined })
    expect(keys(edited, [named("up")], history).state).toMatchObject({ text: "newest", draftBeforeHistory: "middle!" })
  })

  it("Ctrl-R searches back, typing narrows, Ctrl-R again finds an older match, Enter sends it", () => {
    const entries = ["make test", "git status", "make build", "ls"]
    const found = keys(at("draft"), [ctrl("r"), ...typing("make")], entries).state
    expect(found.search).toEqual({ query: "make", at: 2, before: "draft" })
    expect(shownOf(found, entries)).toEqual({ prompt: "(search) \"make\": ", text: "make build", at: 10 })
    const older = keys(found, [ctrl("r")], entries).state
    expect(shownOf(older, entries).text).toBe("make test")
    const sent = keys(older, [named("return")], entries)
    expect(sent.state).toMatchObject({ text: "", search: undefined, prompt: undefined })
    expect(sent.effects).toEqual([
      { _tag: "Sent", prompt: "> ", line: "make test" },
      { _tag: "Remember", line: "make test" },
      { _tag: "Deliver", line: "make test" }
    ])
  })

  it("a search finding nothing says so; Esc gives the line back; another key takes the match to edit", () => {
    const entries = ["make test"]
    const none = keys(at("draft"), [ctrl("r"), ...typing("zz")], entries).state
    expect(promptOf(none, entries)).toBe("(search, nothing found) \"zz\": ")
    expect(keys(none, [named("escape")], entries).state).toEqual(at("draft"))
    const found = keys(at("draft"), [ctrl("r"), "t", named("backspace"), "m"], entries).state
    expect(keys(found, [named("left")], entries)).toEqual({ state: at("make test"), effects: [DRAW] })
  })
})

describe("sending and leaving", () => {
  it("Enter sends the line: drawn as sent, kept in history, handed over; the prompt is gone", () => {
    const { effects, state } = keys(at("hello"), [named("return")])
    expect(state).toEqual({ ...initialLineState, prompt: undefined })
    expect(effects).toEqual([
      { _tag: "Sent", prompt: "> ", line: "hello" },
      { _tag: "Remember", line: "hello" },
      { _tag: "Deliver", line: "hello" }
    ])
  })

  it("a blank line is sent but not kept in history", () => {
    expect(keys(at("  "), [named("return")]).effects).toEqual([
      { _tag: "Sent", prompt: "> ", line: "  " },
      { _tag: "Deliver", line: "  " }
    ])
  })

  it("typed while no prompt is shown (type-ahead), a line is handed over without drawing", () => {
    const { effects, state } = keys(ahead("", 0), [...typing("next"), named("return")])
    expect(state.text).toBe("")
    expect(effects).toEqual([{ _tag: "Remember", line: "next" }, { _tag: "Deliver", line: "next" }])
  })

  it("ask shows a prompt over the type-ahead kept", () => {
    const typedAhead = keys(ahead("", 0), typing("more")).state
    expect(ask(typedAhead, ">> ")).toEqual({ ...at("more"), prompt: ">> " })
  })

  it("Ctrl-D on an empty line leaves", () => {
    expect(keys(at(""), [ctrl("d")])).toEqual({
      state: ahead("", 0),
      effects: [{ _tag: "LeaveDrawing", prompt: "> ", text: "" }, { _tag: "Deliver", line: undefined }]
    })
  })

  it("the end of input leaves with the line typed left on the screen", () => {
    expect(leave(at("half"), [])).toEqual({
      state: ahead("", 0),
      effects: [{ _tag: "LeaveDrawing", prompt: "> ", text: "half" }, { _tag: "Deliver", line: undefined }]
    })
    expect(leave(ahead("", 0), []).effects).toEqual([{ _tag: "Deliver", line: undefined }])
  })
})

describe("Ctrl-C and Esc", () => {
  it("at a prompt with a line, Ctrl-C drops the line", () => {
    expect(keys(at("oops"), [ctrl("c")])).toEqual({
      state: at(""),
      effects: [{ _tag: "Echo", text: "^C" }, { _tag: "LeaveDrawing", prompt: "> ", text: "" }, DRAW]
    })
  })

  it("at an empty prompt, Ctrl-C warns; a second one soon after leaves, a late one warns again", () => {
    const first = keys(at(""), [ctrl("c")], [], 10_000)
    expect(first).toEqual({ state: { ...at(""), firstCtrlC: 10_000 }, effects: [{ _tag: "Say", line: LEAVE_HINT }] })
    const soon = keys(first.state, [ctrl("c")], [], 10_000 + LEAVE_WINDOW_MS - 1)
    expect(soon.effects.at(-1)).toEqual({ _tag: "Deliver", line: undefined })
    expect(soon.state.prompt).toBeUndefined()
    const late = keys(first.state, [ctrl("c")], [], 10_000 + LEAVE_WINDOW_MS)
    expect(late.effects).toEqual([{ _tag: "Say", line: LEAVE_HINT }])
    expect(late.state.firstCtrlC).toBe(10_000 + LEAVE_WINDOW_MS)
  })

  it("while a turn runs, Ctrl-C and Esc cancel it and leave the type-ahead alone", () => {
    const running = ahead("typed ahead", 11)
    expect(keys(running, [ctrl("c")])).toEqual({ state: running, effects: [{ _tag: "Cancel" }] })
    expect(keys(running, [named("escape")])).toEqual({ state: running, effects: [{ _tag: "Cancel" }] })
  })

  it("at a prompt, Esc does nothing", () => {
    expect(keys(at("abc"), [named("escape")])).toEqual({ state: at("abc"), effects: [] })
  })
})

describe("a bracketed paste", () => {
  it("is text: Enter adds a line, Tab a tab, nothing is drawn until it ends", () => {
    const pasted = keys(at("say: "), [
      named("paste-start"),
      ...typing("a"),
      named("return"),
      named("tab"),
      ...typing("b"),
      ctrl("c")
    ])
    expect(pasted.state).toMatchObject({ text: "say: a\n\tb", pasting: true, prompt: "> " })
    expect(pasted.effects).toEqual([])
    expect(keys(pasted.state, [named("paste-end")])).toEqual({
      state: { ...pasted.state, pasting: false },
      effects: [DRAW]
    })
  })
})

describe("Tab completion", () => {
  it("Tab asks for what completes the text before the cursor", () => {
    expect(keys(at("/res tail", 4), [named("tab")])).toEqual({
      state: at("/res tail", 4),
      effects: [{ _tag: "Complete", before: "/res" }]
    })
  })

  it("one item is put in with a space after it, or none after a folder", () => {
    expect(completed(at("/res tail", 4), "/res", { start: 0, items: ["/resume"] })).toEqual({
      state: at("/resume  tail", 8),
      effects: [DRAW]
    })
    expect(completed(at("see @sr"), "see @sr", { start: 5, items: ["src/"] }).state).toEqual(at("see @src/"))
  })

  it("several items are completed to their common prefix, or listed once and the first put in", () => {
    expect(completed(at("/s"), "/s", { start: 0, items: ["/sessions", "/session-id"] }).state).toEqual(at("/session"))
    const items = ["/sessions", "/search"]
    const listed = completed(at("/se"), "/se", { start: 0, items })
    expect(listed).toEqual({
      state: { ...at("/sessions"), cycle: { start: 0, items, index: 0 } },
      effects: [{ _tag: "Say", line: "/sessions  /search" }, DRAW]
    })
    const many = Array.from({ length: 45 }, (_, i) => `/c${i}`)
    expect(completed(at("/c"), "/c", { start: 0, items: many }).effects).toEqual([
      { _tag: "Say", line: `${many.slice(0, 40).join("  ")}  … 5 more` },
      DRAW
    ])
  })

  it("each Tab after a list puts in the next item, never lists again; another key ends the round", () => {
    const items = ["/sessions", "/search"]
    const listed = completed(at("/se tail", 3), "/se", { start: 0, items }).state
    const second = keys(listed, [named("tab")])
    expect(second.state).toMatchObject({ text: "/search tail", cursor: 7 })
    expect(second.effects).toEqual([DRAW])
    expect(keys(second.state, [named("tab")]).state).toMatchObject({ text: "/sessions tail", cursor: 9 })
    const ended = keys(second.state, ["x", named("tab")])
    expect(ended.state).toMatchObject({ text: "/searchx tail", cycle: undefined })
    expect(ended.effects).toEqual([{ _tag: "Complete", before: "/searchx" }])
  })

  it("/ on an empty line shows the command menu; Tab then cycles without listing the commands again", () => {
    expect(keys(at(""), ["/"])).toEqual({ state: at("/"), effects: [{ _tag: "CommandMenu" }] })
    expect(keys(at("a"), ["/"]).effects).toEqual([DRAW])
    expect(keys(ahead(""), ["/"]).effects).toEqual([DRAW])
    expect(completed(at("/"), "/", { start: 0, items: ["/help", "/new"] })).toEqual({
      state: { ...at("/help"), cycle: { start: 0, items: ["/help", "/new"], index: 0 } },
      effects: [DRAW]
    })
  })

  it("nothing is done when nothing is offered or the line changed meanwhile", () => {
    expect(completed(at("/x"), "/x", undefined)).toEqual({ state: at("/x"), effects: [] })
    expect(completed(at("/x"), "/x", { start: 0, items: [] })).toEqual({ state: at("/x"), effects: [] })
    expect(completed(at("/xy"), "/x", { start: 0, items: ["/xz"] })).toEqual({ state: at("/xy"), effects: [] })
  })
})
