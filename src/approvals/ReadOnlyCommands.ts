// The programs mm knows to be read-only, with the options each may take (docs/how-to/approvals.md),
// and the check of a simple command's words against them. Only a command that passes is offered
// a reusable "always", and only such a command is covered by one (ApprovalScope.ts): the list
// says what is allowed, so an option it forgot is refused, never let through.
//
// Each program's options were taken from its own --help (GNU coreutils 9.1, grep 3.8, file 5.44,
// tree 2.1, ripgrep 13, git 2.39). GNU tools accept any unambiguous prefix of a long option, so
// their lists hold every long option, the refused ones too (with why): a prefix is resolved
// against all of them. git, rg and tree take long options only whole.
import * as fs from "node:fs"
import * as path from "node:path"

import { projectTargetOf } from "../lib/RealPath"
import { looksSecret } from "../tools/SecretFiles"
import { findRepository, repositoryRuns } from "./GitRepository"
import { type Kind, type Operands, parseArgs, type Program, type Style } from "./ReadOnlyParse"

/**
 * `"a/all I/ignore=v"`: each word one option, its names joined by `/` (a letter is a short
 * option, a longer name a long one), and after `=` what it takes (nothing without).
 */
const optionsOf = (text: string): Map<string, Kind> =>
  new Map(
    text.split(/\s+/).filter((w) => w !== "").flatMap((w) => {
      const [names, kind] = w.split("=")
      return names.split("/").map((name): [string, Kind] => [name, (kind ?? "f") as Kind])
    })
  )

/** `{ "f/follow retry": "never ends" }`: each name (words and `/` alike) → why it is refused. */
const refusedOf = (reasons: Readonly<Record<string, string>>): Map<string, string> =>
  new Map(
    Object.entries(reasons).flatMap(([names, why]) => names.split(/[\s/]+/).map((n): [string, string] => [n, why]))
  )

const program = (
  style: Style,
  operands: Operands,
  options: string,
  refused: Readonly<Record<string, string>> = {},
  extra: Pick<Program, "numeric" | "patterns"> = {}
): Program => ({ style, operands, options: optionsOf(options), refused: refusedOf(refused), ...extra })

const GNU_INFO = "help version"
const FOLLOWS = "follows links, out of the project too"
const FILE_LIST = "reads the names of the files to read from a file"
const EVERY_FILE = "reads every file below a directory, secret ones too"
const HIDDEN = "reads hidden or ignored files, secret ones too"
const UNCOMPRESS = "runs programs to uncompress"

/** The list: program → how it is read. git is per subcommand (`GIT`). */
export const READ_ONLY: Readonly<Record<string, Program>> = {
  ls: program(
    "gnu",
    "paths",
    `a/all A/almost-all author b/escape block-size=v B/ignore-backups c C color=o d/directory D/dired f
     F/classify=o file-type format=v full-time g group-directories-first G/no-group h/human-readable si
     H/dereference-command-line dereference-command-line-symlink-to-dir hide=v hyperlink=o indicator-style=v
     i/inode I/ignore=v k/kibibytes l m n/numeric-uid-gid N/literal o p q/hide-control-chars
     show-control-chars Q/quote-name quoting-style=v r/reverse R/recursive s/size S sort=v time=v
     time-style=v t T/tabsize=v u U v w/width=v x X Z/context zero 1 ${GNU_INFO}`,
    { "L/dereference": FOLLOWS }
  ),
  cat: program(
    "gnu",
    "paths",
    `A/show-all b/number-nonblank e E/show-ends n/number s/squeeze-blank t T/show-tabs u
     v/show-nonprinting ${GNU_INFO}`
  ),
  head: program(
    "gnu",
    "paths",
    `c/bytes=v n/lines=v q/quiet/silent v/verbose z/zero-terminated ${GNU_INFO}`,
    {},
    { numeric: true }
  ),
  tail: program(
    "gnu",
    "paths",
    `c/bytes=v n/lines=v q/quiet/silent v/verbose z/zero-terminated s/sleep-interval=v max-unchanged-stats=v
     ${GNU_INFO}`,
    { "f F follow retry pid": "follows the file and never ends", "-presume-input-pipe": "is not documented" },
    { numeric: true }
  ),
  wc: program("gnu", "paths", `c/bytes m/chars l/lines L/max-line-length w/words total=v ${GNU_INFO}`, {
    "files0-from": FILE_LIST
  }),
  file: program(
    "gnu",
    "paths",
    `b/brief c/checking-printout e/exclude=v exclude-quiet=v F/separator=v i/mime apple extension mime-type
     mime-encoding k/keep-going l/list h/no-dereference n/no-buffer N/no-pad 0/print0 P/parameter=v r/raw
     s/special-files d/debug v/version help`,
    {
      "C/compile": "writes a compiled magic file",
      "p/preserve-date": "sets the files' access times",
      "z/uncompress Z/uncompress-noreport": UNCOMPRESS,
      "m/magic-file": "reads the magic files it is given",
      "f/files-from": FILE_LIST,
      "S/no-sandbox": "turns off file's own sandbox",
      "L/dereference": FOLLOWS
    }
  ),
  stat: program("gnu", "paths", `L/dereference f/file-system cached=v c/format=v printf=v t/terse ${GNU_INFO}`),
  du: program(
    "gnu",
    "paths",
    `0/null a/all apparent-size B/block-size=v b/bytes c/total D/dereference-args d/max-depth=v H
     h/human-readable inodes k l/count-links m P/no-dereference S/separate-dirs si s/summarize
     t/threshold=v time=o time-style=v X/exclude-from=p exclude=v x/one-file-system ${GNU_INFO}`,
    { "L/dereference": FOLLOWS, "files0-from": FILE_LIST }
  ),
  tree: program(
    "tree",
    "paths",
    `a d f x L=v P=v I=v gitignore gitfile=p ignore-case matchdirs metafirst prune info infofile=p noreport
     charset=v filelimit=v q N Q p u g s h si du D timefmt=v F inodes device v t c U r dirsfirst filesfirst
     sort=v i A S n C X J H=v T=v nolinks hintro=p houtro=p version help`,
    {
      o: "writes its listing to a file",
      R: "writes a listing file in each directory",
      l: FOLLOWS,
      "fromfile fflinks": FILE_LIST
    }
  ),
  grep: program(
    "gnu",
    "pattern",
    `E/extended-regexp F/fixed-strings G/basic-regexp P/perl-regexp e/regexp=v f/file=p i/ignore-case
     no-ignore-case w/word-regexp x/line-regexp z/null-data s/no-messages v/invert-match V/version help
     m/max-count=v b/byte-offset n/line-number line-buffered H/with-filename h/no-filename label=v
     o/only-matching q/quiet/silent binary-files=v a/text I D/devices=v include=v exclude=v exclude-from=p
     exclude-dir=v L/files-without-match l/files-with-matches c/count T/initial-tab Z/null
     B/before-context=v A/after-context=v C/context=v group-separator=v no-group-separator color=o colour=o
     U/binary`,
    { "r/recursive R/dereference-recursive d/directories": EVERY_FILE },
    { numeric: true, patterns: new Set(["e", "regexp", "f", "file"]) }
  ),
  rg: program(
    "whole",
    "pattern",
    `A/after-context=v auto-hybrid-regex B/before-context=v binary block-buffered b/byte-offset
     s/case-sensitive color=v colors=v column C/context=v context-separator=v no-context-separator c/count
     count-matches crlf debug dfa-size-limit=v E/encoding=v engine=v field-context-separator=v
     field-match-separator=v f/file=p files l/files-with-matches files-without-match F/fixed-strings
     g/glob=v glob-case-insensitive heading h/help iglob=v i/ignore-case ignore-file=p
     ignore-file-case-insensitive include-zero v/invert-match json line-buffered n/line-number
     x/line-regexp M/max-columns=v max-columns-preview m/max-count=v max-depth=v max-filesize=v mmap
     U/multiline multiline-dotall no-config I/no-filename no-heading no-ignore-messages N/no-line-number
     no-messages no-mmap no-pcre2-unicode no-require-git no-unicode 0/null null-data one-file-system
     o/only-matching passthru path-separator=v P/pcre2 pcre2-version p/pretty q/quiet regex-size-limit=v
     e/regexp=v r/replace=v S/smart-case sort=v sortr=v stats a/text j/threads=v trim t/type=v type-add=v
     type-clear=v type-list T/type-not=v V/version vimgrep H/with-filename w/word-regexp`,
    {
      "pre pre-glob": "runs the program it is given on each file",
      "z/search-zip": UNCOMPRESS,
      "L/follow": FOLLOWS,
      ". hidden u unrestricted no-ignore no-ignore-dot no-ignore-exclude no-ignore-files": HIDDEN,
      "no-ignore-global no-ignore-parent no-ignore-vcs": HIDDEN
    },
    { patterns: new Set(["e", "regexp", "f", "file", "files", "type-list"]) }
  ),
  pwd: program("gnu", "none", "L P"),
  echo: program("gnu", "words", "")
}

// ---------------------------------------------------------------------------
// git: its own subcommands that only read, each with its options

const DIFF = `p/u/patch s/no-patch raw patch-with-raw patch-with-stat numstat shortstat summary name-only
  name-status check full-index binary abbrev=o B=o M=o C=o find-renames=o find-copies=o find-copies-harder D
  irreversible-delete no-renames rename-empty no-rename-empty R a/text ignore-cr-at-eol ignore-space-at-eol
  b/ignore-space-change w/ignore-all-space ignore-blank-lines minimal patience histogram indent-heuristic
  no-indent-heuristic W/function-context exit-code quiet no-ext-diff no-textconv no-color color=o
  color-moved=o no-color-moved color-moved-ws=v no-color-moved-ws color-words=o word-diff=o
  word-diff-regex=v no-prefix default-prefix z stat=o compact-summary dirstat=o cumulative dirstat-by-file=o
  submodule=o ws-error-highlight=v ita-invisible-in-index diff-algorithm=v U/unified=v inter-hunk-context=v
  stat-width=v stat-name-width=v stat-count=v stat-graph-width=v diff-filter=v S=v G=v pickaxe-all
  pickaxe-regex find-object=v relative=o no-relative src-prefix=v dst-prefix=v line-prefix=v l=v
  ignore-submodules=o anchored=v output-indicator-new=v output-indicator-old=v output-indicator-context=v
  I/ignore-matching-lines=v no-stat`

const LOG = `${DIFF} oneline graph all branches=o tags=o remotes=o glob=v exclude=v first-parent merges
  no-merges min-parents=v max-parents=v no-min-parents no-max-parents reverse topo-order date-order
  author-date-order date=v relative-date format=v pretty=o abbrev-commit no-abbrev-commit decorate=o
  no-decorate decorate-refs=v decorate-refs-exclude=v clear-decorations source follow full-history
  simplify-by-decoration simplify-merges dense sparse ancestry-path=o left-right left-only right-only
  cherry-pick cherry-mark cherry boundary parents children no-walk=o do-walk g/walk-reflogs reflog log-size
  use-mailmap mailmap no-mailmap no-use-mailmap full-diff m c cc dd diff-merges=v no-diff-merges
  remerge-diff combined-all-paths notes=o no-notes show-notes=o expand-tabs=o no-expand-tabs encoding=v
  n/max-count=v skip=v since=v after=v until=v before=v author=v committer=v grep=v grep-reflog=v
  all-match invert-grep i/regexp-ignore-case E/extended-regexp F/fixed-strings P/perl-regexp basic-regexp
  merge not bisect single-worktree show-linear-break=o show-pulls q`

/** What git's read-only subcommands must never be given, with why (unless one lists it as its own). */
const GIT_REFUSED: Readonly<Record<string, string>> = {
  "output output-directory": "writes a file",
  "ext-diff": "runs an external diff program",
  textconv: "runs the text conversion programs of the configuration",
  "O open-files-in-pager": "runs the program it is given",
  "no-index": "reads files outside the repository",
  "show-signature": "runs gpg",
  help: "opens a manual page or a browser"
}

const git = (options: string, operands: Operands = "revs", refused: Record<string, string> = {}): Program =>
  program("git", operands, options, { ...GIT_REFUSED, ...refused }, { numeric: true })

/** git's own subcommands that only read (an alias, or any other subcommand, is not read-only). */
export const GIT: Readonly<Record<string, Program>> = {
  status: git(`s/short b/branch show-stash porcelain=o long v/verbose u/untracked-files=o ignore-submodules=o
    ignored=o z column=o no-column ahead-behind no-ahead-behind renames no-renames find-renames=o null`),
  diff: git(`${DIFF} cached staged merge-base 0 1/base 2/ours 3/theirs`),
  log: git(LOG),
  show: git(LOG),
  branch: git(
    `a/all r/remotes l/list v/verbose show-current contains=n no-contains=n merged=n no-merged=n points-at=n
     sort=v format=v color=o no-color i/ignore-case column=o no-column abbrev=v no-abbrev q/quiet omit-empty`,
    "listed",
    {
      "d D delete m M move c C copy f force t track u set-upstream-to unset-upstream edit-description":
        "changes branches",
      "create-reflog": "changes branches"
    }
  ),
  blame: git(`b root show-stats progress no-progress score-debug f/show-name n/show-number p/porcelain
    line-porcelain incremental c l t s e/show-email w minimal abbrev=o date=v color-lines color-by-age M=o C=o
    L=v ignore-rev=v ignore-revs-file=p contents=p S=p since=v first-parent encoding=v`),
  "rev-parse": git(`show-toplevel show-cdup show-prefix git-dir absolute-git-dir git-common-dir
    is-inside-git-dir is-inside-work-tree is-bare-repository is-shallow-repository
    show-superproject-working-tree shared-index-path show-object-format=o show-ref-format local-env-vars verify
    q/quiet short=o abbrev-ref=o symbolic symbolic-full-name all branches=o tags=o remotes=o glob=v exclude=v
    disambiguate=v default=v prefix=p revs-only no-revs flags no-flags not since=v after=v until=v before=v
    git-path=p sq`),
  "ls-files": git(
    `c/cached d/deleted m/modified o/others i/ignored s/stage k/killed u/unmerged resolve-undo directory
     no-empty-directory eol z t v f full-name recurse-submodules abbrev=o debug deduplicate sparse
     error-unmatch exclude-standard x/exclude=v X/exclude-from=p exclude-per-directory=v with-tree=v
     format=v`,
    "paths"
  ),
  version: git("build-options", "none")
}

/** Options of git itself, before its subcommand, that change nothing and run nothing. */
const GIT_GLOBAL = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects"
])

// ---------------------------------------------------------------------------
// The check

/** Whether a file (absolute, or a name) looks secret: the built-in names, and the configuration's `secrets:` globs. */
export type SecretTest = (file: string) => boolean

export type ReadOnlyVerdict =
  /** `key`: the program, and git's subcommand: what a reusable "always" names (`git log`, `ls`). */
  | { readonly _tag: "ReadOnly"; readonly key: ReadonlyArray<string> }
  /** Why not, in words: `rm is not a read-only command`, `git log --output writes a file`. */
  | { readonly _tag: "NotReadOnly"; readonly reason: string }

const no = (reason: string): ReadOnlyVerdict => ({ _tag: "NotReadOnly", reason })

/**
 * Why a path a command names may not be read under a reusable "always": it looks secret, or it
 * does not really lie inside the project (links followed, a file with other hard links refused).
 */
const checkPath = (word: string, cwd: string, secret: SecretTest): string | undefined => {
  if (looksSecret(word) || secret(path.resolve(cwd, word))) return `${word} looks like a secret file`
  const target = projectTargetOf(cwd, word)
  if (target._tag === "Outside") return `path ${word} ${target.why.replace(/^it (?:now )?/, "")}`
  return secret(target.real) ? `path ${word} leads to ${target.real}, which looks like a secret file` : undefined
}

/** The program (and git subcommand) a remembered prefix names, when it is on the list. */
export const listedProgram = (words: ReadonlyArray<string>): Program | undefined => {
  if (words[0] === "git") return words.length === 2 ? GIT[words[1]] : undefined
  return words.length === 1 && Object.hasOwn(READ_ONLY, words[0]) ? READ_ONLY[words[0]] : undefined
}

/**
 * Whether this simple command (its words, quotes removed) only reads, by the list: its program
 * (and git subcommand) is listed, every option is one of its allowed ones, and every path it
 * names really lies inside the project directory `cwd` and does not look secret.
 */
export const readOnlyOf = (
  words: ReadonlyArray<string>,
  cwd: string,
  secret: SecretTest = looksSecret
): ReadOnlyVerdict => {
  const name = words[0] ?? ""
  if (name === "git") return gitReadOnly(words, cwd, secret)
  if (!Object.hasOwn(READ_ONLY, name)) return no(`${name} is not a read-only command`)
  const problem = checkArgs(name, READ_ONLY[name], words.slice(1), cwd, secret)
  return problem === undefined ? { _tag: "ReadOnly", key: [name] } : no(problem)
}

const gitReadOnly = (words: ReadonlyArray<string>, cwd: string, secret: SecretTest): ReadOnlyVerdict => {
  let at = 1
  while (at < words.length && words[at].startsWith("-")) {
    if (!GIT_GLOBAL.has(words[at])) {
      return no(
        /^-c|^--(?:c|config-env|exec-path)/.test(words[at])
          ? `git ${words[at]} changes how git runs`
          : `git ${words[at]} is not a read-only option of git`
      )
    }
    at++
  }
  const sub = words[at]
  if (sub === undefined) return no("git without a subcommand is not on mm's list")
  const gpg = words.find((word) => word.includes("%G"))
  if (gpg !== undefined) return no(`git's %G placeholders (${gpg}) check signatures with gpg`)
  if (!Object.hasOwn(GIT, sub)) return no(`git ${sub} is not a read-only git command (nor may an alias be)`)
  const problem = checkArgs(`git ${sub}`, GIT[sub], words.slice(at + 1), cwd, secret) ?? repositoryRuns(cwd)
  return problem === undefined ? { _tag: "ReadOnly", key: ["git", sub] } : no(problem)
}

/**
 * Why a git operand reads what the project does not hold: `:…` (pathspec magic such as
 * `:(top)`, `:/`, or a path of the index) and `REV:path` name paths from the repository's top,
 * which may be above the project; `REV:./path` is relative to the project. Each such path must
 * lie inside the project and not look secret.
 */
const revPathProblem = (operand: string, cwd: string, secret: SecretTest): string | undefined => {
  if (operand.startsWith(":")) return `git ${operand} names a path from the repository's top`
  const colon = operand.indexOf(":")
  if (colon < 0) return undefined
  const inRepo = operand.slice(colon + 1)
  let top: string
  try {
    top = findRepository(cwd)?.top ?? cwd
  } catch {
    return `git ${operand}: the repository cannot be found`
  }
  const file = /^\.\.?(?:\/|$)/.test(inRepo) ? path.resolve(cwd, inRepo) : path.resolve(top, inRepo)
  return looksSecret(inRepo) ? `${operand} looks like a secret file` : checkPath(file, cwd, secret)
}

/**
 * rg reads every file below a directory it searches, the secret-looking ones its ignore rules
 * do not hide (`server.pem`; a project's `.ignore` may bring `.env` back): a reusable answer
 * covers rg only on files named one by one, or listing names (`--files`).
 */
const wholeDirectory = (
  shown: string,
  seen: ReadonlySet<string>,
  operands: ReadonlyArray<string>,
  cwd: string
): string | undefined => {
  if (shown !== "rg" || seen.has("files") || seen.has("type-list")) return undefined
  if (operands.length === 0) return "rg without a file searches the whole directory, secret-looking files too"
  const folder = operands.find((operand) => {
    try {
      return fs.statSync(path.resolve(cwd, operand), { throwIfNoEntry: false })?.isDirectory() === true
    } catch {
      return false
    }
  })
  return folder === undefined ? undefined : `rg ${folder} searches a whole directory, secret-looking files too`
}

/** Why these arguments are not read-only for `shown` (its name), or undefined. */
const checkArgs = (
  shown: string,
  spec: Program,
  args: ReadonlyArray<string>,
  cwd: string,
  secret: SecretTest
): string | undefined => {
  if (spec.operands === "words") return undefined
  const parsed = parseArgs(shown, spec, args)
  if (typeof parsed === "string") return parsed
  for (const value of parsed.paths) {
    const problem = checkPath(value, cwd, secret)
    if (problem !== undefined) return problem
  }
  const operands = spec.operands === "pattern" && !parsed.patternGiven ? parsed.operands.slice(1) : parsed.operands
  if (operands.length > 0 && spec.operands === "none") return `${shown} takes no arguments here`
  if (operands.length > 0 && spec.operands === "listed" && !parsed.listing) {
    return `${shown} ${operands[0]} makes a branch`
  }
  if (spec.operands === "listed") return undefined
  for (const operand of operands) {
    const problem = spec.operands === "revs" && operand.includes(":")
      ? revPathProblem(operand, cwd, secret)
      : checkPath(operand, cwd, secret)
    if (problem !== undefined) return problem
  }
  return wholeDirectory(shown, parsed.seen, operands, cwd)
}
