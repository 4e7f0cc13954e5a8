// The one table of programs whose "always" must not be a word prefix as it stands: programs that
// run other programs (only the exact command is ever remembered for them), and the options,
// subcommands or scripts with which a program runs code or writes elsewhere (a command using one
// is asked as the exact command, and no earlier prefix covers it). docs/how-to/approvals.md lists
// the same rows for people. The matching errs on the side of asking: an abbreviated long option
// (`--ev` for `--eval`), an option inside a cluster (`-Ic`) or with its value attached (`-cCODE`)
// counts as the option itself.
import * as path from "node:path"

interface Row {
  /** Runs the program (or code) its arguments name: never more than the exact command. */
  readonly runs?: string
  /** One-letter options that run code or write elsewhere, alone, in a cluster or with a value attached. */
  readonly short?: string
  /** Long options (`--name`, `--name=VALUE`, or any abbreviation of the name). */
  readonly long?: ReadonlyArray<string>
  /** Whole words (find's `-exec`), also as `WORD=VALUE`. */
  readonly words?: ReadonlyArray<string>
  /** Subcommands (the first word that is not an option) that run other programs or change config. */
  readonly subcommands?: ReadonlyArray<string>
  /** A check of its own, given the arguments: what it finds, in words; undefined when nothing. */
  readonly check?: (args: ReadonlyArray<string>) => string | undefined
}

/** The words of a list written as one text, split at spaces. */
const words = (text: string): ReadonlyArray<string> => text.split(" ")

const RUNS = "runs the program it is given"
const runs = (what = RUNS): Row => ({ runs: what })

/** sed scripts made only of these commands read and print, nothing else (no `e`, `w`, `r`, `W`). */
const SED_ADDRESS = String.raw`(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)`
const SED_COMMAND = String.raw`(?:[pdqQ=lnNPDhHgGxz]|s/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/[gpiImM0-9]*)`
const SED_SAFE = new RegExp(
  String.raw`^\s*(?:(?:${SED_ADDRESS}(?:,${SED_ADDRESS})?!?)?\s*${SED_COMMAND}\s*(?:;\s*|\n\s*|$))+$`
)

const sedScripts = (args: ReadonlyArray<string>): string | undefined => {
  const scripts: Array<string> = []
  let explicit = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "-e" || arg === "--expression") {
      explicit = true
      scripts.push(args[++i] ?? "")
    } else if (arg.startsWith("--expression=")) {
      explicit = true
      scripts.push(arg.slice("--expression=".length))
    } else if (/^-[a-zA-Z]*e./.test(arg) && !arg.startsWith("--")) {
      explicit = true
      scripts.push(arg.slice(arg.indexOf("e") + 1))
    } else if (/^-[a-zA-Z]*e$/.test(arg)) {
      explicit = true
      scripts.push(args[++i] ?? "")
    } else if (!arg.startsWith("-") && !explicit) {
      explicit = true
      scripts.push(arg)
    }
  }
  const unsafe = scripts.find((script) => !SED_SAFE.test(script))
  return unsafe === undefined
    ? undefined
    : `sed script ${JSON.stringify(unsafe)} may run or write (only p, d, q, s/…/…/ are read)`
}

const AWK_CODE = /system|getline|[|>]|@load|@include/

const awkProgram = (args: ReadonlyArray<string>): string | undefined => {
  const code = args.find((arg) => AWK_CODE.test(arg))
  return code === undefined ? undefined : `awk program ${JSON.stringify(code)} may run commands or write files`
}

const makeVariable = (args: ReadonlyArray<string>): string | undefined => {
  const assignment = args.find((arg) => !arg.startsWith("-") && arg.includes("="))
  return assignment === undefined ? undefined : `make ${assignment} sets a variable that can run any command`
}

/** git subcommands that are git's own (not aliases, which may run anything) and run no other program. */
const GIT_OWN = new Set(words(
  "add am apply blame branch cat-file checkout cherry-pick clean clone commit count-objects describe diff " +
    "diff-files diff-index diff-tree fetch for-each-ref format-patch fsck gc grep help init log ls-files ls-remote " +
    "ls-tree merge merge-base mv notes prune pull push range-diff rebase reflog remote reset restore rev-list " +
    "rev-parse revert rm shortlog show show-ref sparse-checkout stash status switch symbolic-ref tag version " +
    "whatchanged worktree"
))

const gitSubcommand = (args: ReadonlyArray<string>): string | undefined => {
  const sub = args.find((arg) => !arg.startsWith("-"))
  if (sub === undefined || GIT_OWN.has(sub)) return undefined
  return `git ${sub} may be an alias or run other programs`
}

const ddOutput = (args: ReadonlyArray<string>): string | undefined =>
  args.some((arg) => arg.startsWith("of=")) ? "dd of= writes where it says" : undefined

const PYTHON: Row = { short: "c" }
const NODE: Row = {
  short: "epr",
  long: ["eval", "print", "require", "import", "loader", "experimental-loader", "env-file"]
}
const AWK: Row = { short: "Eil", long: ["exec", "include", "load", "source"], check: awkProgram }
const MAKE: Row = { short: "EfCI", long: ["eval", "file", "makefile", "directory", "include-dir"], check: makeVariable }
const INTO_DIRECTORY: Row = { short: "t", long: ["target-directory"] }

/** The table: program (its file name, version suffix ignored: python3.12 is python) → row. */
const RISKY: Readonly<Record<string, Row>> = {
  // shells and programs that run the command in their arguments
  ...Object.fromEntries(
    words(
      "sh bash zsh dash fish ksh mksh csh tcsh busybox env sudo doas su runuser pkexec exec eval command " +
        "builtin xargs parallel time timeout nice nohup ionice stdbuf chroot watch strace ltrace setsid " +
        "unbuffer flock source . npx pnpx bunx uvx ssh script gdb valgrind taskset chrt systemd-run firejail " +
        "trap sg coproc vim vi nvim ex emacs"
    ).map((name) => [name, runs()])
  ),
  python: PYTHON,
  pypy: PYTHON,
  node: NODE,
  nodejs: NODE,
  bun: { short: "ep", long: ["eval", "print", "preload"], subcommands: ["x", "exec", "create"] },
  deno: { subcommands: ["eval", "repl", "x"] },
  perl: { short: "eEiMmx" },
  ruby: { short: "eirI" },
  php: { short: "rBREF" },
  lua: { short: "el" },
  luajit: { short: "el" },
  Rscript: { short: "e" },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  sed: { short: "if", long: ["in-place", "file"], check: sedScripts },
  find: { words: ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"] },
  tar: {
    short: "ICFP",
    long: [
      "checkpoint-action",
      "to-command",
      "use-compress-program",
      "info-script",
      "new-volume-script",
      "rsh-command",
      "rmt-command",
      "directory",
      "absolute-names"
    ],
    // the old form without a dash: `tar xIf …`
    check: (args) => (/^[A-Za-z]+$/.test(args[0] ?? "") && /[ICFP]/.test(args[0]) ? `tar ${args[0]}` : undefined)
  },
  git: {
    short: "cOx",
    long: [
      "config-env",
      "exec-path",
      "output",
      "output-directory",
      "ext-diff",
      "textconv",
      "open-files-in-pager",
      "upload-pack",
      "receive-pack",
      "exec",
      "template"
    ],
    check: gitSubcommand
  },
  make: MAKE,
  gmake: MAKE,
  npm: {
    short: "c",
    long: ["script-shell", "node-options", "call"],
    subcommands: ["exec", "x", "explore", "init", "create", "edit"]
  },
  pnpm: { short: "c", long: ["script-shell", "node-options"], subcommands: ["exec", "dlx", "create", "x"] },
  yarn: { long: ["script-shell"], subcommands: ["exec", "dlx", "create"] },
  uv: { subcommands: ["run", "tool"] },
  poetry: { subcommands: ["run"] },
  pipenv: { subcommands: ["run"] },
  bundle: { subcommands: ["exec"] },
  cargo: { long: ["config"] },
  go: { words: ["-exec", "-toolexec", "--exec", "--toolexec"] },
  rsync: { short: "e", long: ["rsh", "rsync-path"] },
  rg: { long: ["pre"] },
  scp: { short: "oSF" },
  sftp: { short: "oSF" },
  curl: { short: "oOK", long: ["output", "output-dir", "config", "remote-name"] },
  wget: { short: "oOPe", long: ["output-document", "output-file", "directory-prefix", "execute"] },
  zip: { short: "T", long: ["unzip-command", "test"] },
  unzip: { short: "d" },
  sort: { short: "o", long: ["output", "compress-program"] },
  patch: { short: "od", long: ["output", "directory"] },
  cp: INTO_DIRECTORY,
  mv: INTO_DIRECTORY,
  ln: INTO_DIRECTORY,
  install: INTO_DIRECTORY,
  dd: { check: ddOutput }
}

/** The program's row: by its file name, then without a version suffix (`python3.12`, `pip3`). */
const rowOf = (program: string): Row | undefined => {
  const name = path.basename(program)
  return RISKY[name] ?? RISKY[name.replace(/[\d.-]+$/, "")]
}

const shortHit = (word: string, letters: string): string | undefined => {
  if (!word.startsWith("-") || word.startsWith("--") || word.length < 2) return undefined
  return Array.from(word.slice(1)).find((letter) => letters.includes(letter))
}

const longHit = (word: string, names: ReadonlyArray<string>): string | undefined => {
  if (!word.startsWith("--") || word.length < 3) return undefined
  const given = word.slice(2).split("=")[0]
  return names.find((name) => name.startsWith(given))
}

/**
 * Why this simple command (its words, quotes removed) gets only the exact-command scope: the
 * program runs other programs, or an option, subcommand or script runs code or writes
 * elsewhere. Undefined when a word prefix may cover it.
 */
export const riskOf = (words: ReadonlyArray<string>): string | undefined => {
  const program = path.basename(words[0] ?? "")
  const row = rowOf(program)
  if (row === undefined) return undefined
  if (row.runs !== undefined) return `${program} ${row.runs}`
  const args = words.slice(1)
  for (const word of args) {
    const short = row.short === undefined ? undefined : shortHit(word, row.short)
    if (short !== undefined) return `${program} -${short} runs code or writes elsewhere`
    const long = row.long === undefined ? undefined : longHit(word, row.long)
    if (long !== undefined) return `${program} --${long} runs code or writes elsewhere`
    const whole = row.words?.find((w) => word === w || word.startsWith(`${w}=`))
    if (whole !== undefined) return `${program} ${whole} runs code or writes elsewhere`
  }
  const sub = args.find((arg) => !arg.startsWith("-"))
  if (sub !== undefined && row.subcommands?.includes(sub) === true) return `${program} ${sub} ${RUNS}`
  return row.check?.(args)
}
