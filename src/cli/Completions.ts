import {
  childrenOf,
  type CommandPath,
  COMMANDS,
  optionsOf,
  type OptionSpec,
  ROOT_OPTIONS,
  type Shell,
  specOf,
  TOP_COMMANDS
} from "./CommandLine"

/**
 * `mm --completions SHELL`: a completion script drawn from CommandLine.ts, the table mm's own
 * reading of the command line accepts, so that a shell offers nothing mm would refuse. Each
 * script finds which command the words typed so far name, then offers that command's options
 * (after a `-`) or its subcommands, and completes an option's value: a path, or one of its
 * choices. `sh` gets the bash script (bash reads it; a plain POSIX sh has no completion).
 */

/** A command as the scripts see it: `mm`, `mm sessions`, `mm sessions search`. */
interface Place {
  readonly name: string
  readonly options: ReadonlyArray<OptionSpec>
  /** The words one below it, with what each does. */
  readonly members: ReadonlyArray<{ readonly word: string; readonly summary: string }>
}

const memberOf = (path: CommandPath) => ({ word: path.split(" ").at(-1)!, summary: specOf(path).summary })

const PLACES: ReadonlyArray<Place> = [
  { name: "mm", options: ROOT_OPTIONS, members: TOP_COMMANDS.map(memberOf) },
  ...(Object.keys(COMMANDS) as Array<CommandPath>).map((path) => ({
    name: `mm ${path}`,
    options: optionsOf(path),
    members: childrenOf(path).map(memberOf)
  }))
]

/** The moves from one place to the next: `mm` + `sessions` → `mm sessions`; `first`: only as the first word. */
const MOVES = PLACES.flatMap((place) =>
  place.members.map((member) => ({ from: place.name, word: member.word, to: `${place.name} ${member.word}` }))
)

/** Every option that takes a value, once, with how its value is completed. */
const VALUED = [...new Map(PLACES.flatMap((place) => place.options).map((option) => [option.long, option])).values()]
  .filter((option) => option.value !== undefined)

const namesOf = (option: OptionSpec): ReadonlyArray<string> =>
  option.short === undefined ? [option.long] : [option.short, option.long]

/** `'…'` for any shell: a single quote inside is closed, escaped and reopened. */
const quoted = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`

const bash = (): string =>
  [
    "# mm completion for bash: mm --completions bash > ~/.local/share/bash-completion/completions/mm",
    "_mm_completions() {",
    "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" at=\"mm\" last=0 i",
    "    for ((i = 1; i < COMP_CWORD; i++)); do",
    "        case \"$i:$at/${COMP_WORDS[i]}\" in",
    ...MOVES.map((move) =>
      `            ${quoted(`${move.from === "mm" ? "1" : "*"}:${move.from}/${move.word}`).replace(/^'\*/, "*'")}) at=${
        quoted(move.to)
      } last=$i ;;`
    ),
    "        esac",
    "    done",
    "    case \"$prev\" in",
    ...VALUED.map((option) =>
      `        ${namesOf(option).join("|")}) COMPREPLY=(${
        option.file === true
          ? "$(compgen -f -- \"$cur\")"
          : option.choices !== undefined
          ? `$(compgen -W ${quoted(option.choices.join(" "))} -- "$cur")`
          : ""
      }); return ;;`
    ),
    "    esac",
    "    local words=''",
    "    case \"$at\" in",
    ...PLACES.map((place) =>
      `        ${quoted(place.name)}) if [[ "$cur" == -* ]]; then words=${
        quoted(place.options.flatMap(namesOf).join(" "))
      }; elif ((COMP_CWORD == last + 1)); then words=${
        quoted(place.members.map((member) => member.word).join(" "))
      }; fi ;;`
    ),
    "    esac",
    "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))",
    "}",
    "complete -F _mm_completions mm",
    ""
  ].join("\n")

/** A `_describe` item: `word:what it does`. */
const item = (word: string, what: string): string => quoted(`${word.replaceAll(":", "\\:")}:${what}`)

const zsh = (): string =>
  [
    "#compdef mm",
    "# mm completion for zsh: mm --completions zsh > ~/.zfunc/_mm (a directory of $fpath), or source it",
    "_mm() {",
    "    local at=\"mm\" last=1 i",
    "    for ((i = 2; i < CURRENT; i++)); do",
    "        case \"$((i - 1)):$at/${words[i]}\" in",
    ...MOVES.map((move) =>
      `            (${
        quoted(`${move.from === "mm" ? "1" : "*"}:${move.from}/${move.word}`).replace(/^'\*/, "*'")
      }) at=${quoted(move.to)} last=$i ;;`
    ),
    "        esac",
    "    done",
    "    case \"${words[CURRENT-1]}\" in",
    ...VALUED.map((option) =>
      `        (${namesOf(option).join("|")}) ${
        option.file === true
          ? "_files"
          : option.choices !== undefined
          ? `compadd -- ${option.choices.join(" ")}`
          : ":"
      }; return ;;`
    ),
    "    esac",
    "    local -a items",
    "    case \"$at\" in",
    ...PLACES.map((place) =>
      `        (${quoted(place.name)}) if [[ "$PREFIX" == -* ]]; then items=(${
        place.options.flatMap((option) => namesOf(option).map((name) => item(name, option.help))).join(" ")
      }); elif ((CURRENT == last + 1)); then items=(${
        place.members.map((member) => item(member.word, member.summary)).join(" ")
      }); fi ;;`
    ),
    "    esac",
    "    _describe -t mm 'mm' items",
    "}",
    "if [[ \"${funcstack[1]}\" == \"_mm\" ]]; then _mm \"$@\"; else compdef _mm mm; fi",
    ""
  ].join("\n")

/** fish's `'…'`: a backslash or a single quote inside is escaped with a backslash. */
const fishQuoted = (text: string): string => `'${text.replace(/[\\']/g, "\\$&")}'`

/** The condition of a fish completion: the words typed so far name `place`. */
const fishAt = (place: Place, next = ""): string => `-n ${fishQuoted(`test (__mm_at${next}) = "${place.name}"`)}`

const fishOption = (place: Place, option: OptionSpec): string =>
  [
    `complete -c mm ${fishAt(place)}`,
    ...(option.short === undefined ? [] : [`-s ${option.short.slice(1)}`]),
    `-l ${option.long.slice(2)}`,
    ...(option.value === undefined || option.optionalValue === true
      ? []
      : option.file === true
      ? ["-r", "-F"]
      : option.choices !== undefined
      ? ["-x", `-a ${fishQuoted(option.choices.join(" "))}`]
      : ["-x"]),
    `-d ${fishQuoted(option.help)}`
  ].join(" ")

const fish = (): string =>
  [
    "# mm completion for fish: mm --completions fish > ~/.config/fish/completions/mm.fish",
    "# the command the words typed so far name; with `next`, `none` unless the word typed now follows it",
    "function __mm_at",
    "    set -l at mm",
    "    set -l i 0",
    "    set -l last 1",
    "    for word in (commandline -opc)",
    "        set i (math $i + 1)",
    "        switch \"$i:$at/$word\"",
    ...MOVES.flatMap((move) => [
      // quoted, a fish case pattern still matches its `*`
      `            case ${fishQuoted(`${move.from === "mm" ? "2" : "*"}:${move.from}/${move.word}`)}`,
      `                set at ${fishQuoted(move.to)}`,
      "                set last $i"
    ]),
    "        end",
    "    end",
    "    if test \"$argv[1]\" = next; and test $i -ne $last",
    "        echo none",
    "        return",
    "    end",
    "    echo $at",
    "end",
    "complete -c mm -f",
    ...PLACES.flatMap((place) => [
      ...place.options.map((option) => fishOption(place, option)),
      ...place.members.map((member) =>
        `complete -c mm ${fishAt(place, " next")} -a ${member.word} -d ${fishQuoted(member.summary)}`
      )
    ]),
    ""
  ].join("\n")

export const completionScript = (shell: Shell): string => shell === "zsh" ? zsh() : shell === "fish" ? fish() : bash()
