// The approval rule against a table of command lines (issue 43): for each, whether a reusable
// "always" is offered (the command is read-only by the list: its program, and git's subcommand,
// is the key such an answer names) or only the exact line, and whether each of several remembered
// answers covers it. Each row is read by the real bash parser, its paths resolved in a real
// project directory made for the test: a file inside, a link that leads out, a link inside, a
// file with two hard links, secret-looking files.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "@effect/vitest"

import { alwaysChoices, classifyCommand, isAllowed, type Scope } from "../../src/approvals/ApprovalScope"
import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})

/** The project: every path of the table is resolved in it. */
const project = (() => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-readonly-")))
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-outside-")))
  fs.writeFileSync(path.join(outside, "secret.txt"), "outside")
  // a repository: git counts as read-only only inside one
  execFileSync("git", ["init", "-q"], { cwd: dir })
  for (const dirName of ["src", "docs", "build", "config"]) fs.mkdirSync(path.join(dir, dirName))
  for (const file of ["README.md", "calc.py", "src/a.ts", "src/b.ts", "docs/guide.md", "build/out.js", "log.txt"]) {
    fs.writeFileSync(path.join(dir, file), "x\n")
  }
  for (const secret of [".env", "config/.env.local", "id_rsa", "server.pem", "tls.key", ".npmrc"]) {
    fs.writeFileSync(path.join(dir, secret), "SECRET=1\n")
  }
  fs.symlinkSync(outside, path.join(dir, "out-link"))
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "out-file"))
  fs.symlinkSync("src/a.ts", path.join(dir, "in-link"))
  fs.symlinkSync(".env", path.join(dir, "env-link"))
  fs.writeFileSync(path.join(dir, "hard.txt"), "two names\n")
  fs.linkSync(path.join(dir, "hard.txt"), path.join(outside, "hard-other.txt"))
  return { dir, outside }
})()

/** A row: the command, and either the key of the reusable "always" it offers, or X (exact only, the reason containing `why`). */
type Row = readonly [string, string]
const X = (why = ""): string => `X${why}`

const TABLE: ReadonlyArray<Row> = [
  // --- the issue's cases, verbatim
  ["sed -n 1,20p", X("sed is not a read-only command")],
  ["sed -n 1,20p README.md '--expr=1e touch …'", X("sed is not")],
  ["sed -n 1,20p README.md '--e=1w FILE'", X("sed is not")],
  ["pytest --basetemp=DIR", X("pytest is not")],
  ["pytest --junitxml=/tmp/report.xml", X("pytest is not")],
  ["pytest -p evil_plugin", X("pytest is not")],
  ["pytest", X("pytest is not")],
  ["tar --index-file=/tmp/x -tf a.tar", X("tar is not")],
  ["tar --volno-file=/tmp/x -tf a.tar", X("tar is not")],
  ["tar -tf a.tar", X("tar is not")],
  ["git worktree add ../elsewhere", X("git worktree is not a read-only git command")],
  ["git clone -u 'touch /tmp/pwned' repo", X("git clone is not")],
  ["npm test --prefix /tmp/elsewhere", X("npm is not")],
  ["npm test", X("npm is not")],
  ["rm -rf build", X("rm is not a read-only command")],
  ["rm -rf build src .git", X("rm is not")],
  ["git checkout feature", X("git checkout is not")],
  ["git checkout -- .", X("git checkout is not")],
  ["git reset calc.py", X("git reset is not")],
  ["git reset --hard HEAD~1", X("git reset is not")],
  ["node --version", X("node is not")],
  ["python3 --version", X("python3 is not")],
  ["git --version", X("git --version")],
  ["node evil.js", X("node is not")],
  ["python3 evil.py", X("python3 is not")],
  ["cat /etc/passwd", X("leads outside the project")],
  ["cat ../secret.txt", X("outside the project")],
  ["cat out-link/secret.txt", X("outside the project")],
  ["cat out-file", X("outside the project")],
  ["cat .env", X(".env looks like a secret")],
  ["cat config/.env.local", X("looks like a secret")],
  ["cat env-link", X("which looks like a secret")],
  ["cat hard.txt", X("2 hard links")],
  // --- ls
  ["ls", "ls"],
  ["ls -la", "ls"],
  ["ls -la src", "ls"],
  ["ls src -la", "ls"],
  ["ls -l -h --color=auto src docs", "ls"],
  ["ls --color src", "ls"],
  ["ls -1", "ls"],
  ["ls -R", "ls"],
  ["ls -d */", X()],
  ["ls --all", "ls"],
  ["ls --al", X("ambiguous (--all, --almost-all)")],
  ["ls --almost", "ls"],
  ["ls --a", X("ambiguous")],
  ["ls --sort=time", "ls"],
  ["ls --sort time", "ls"],
  ["ls --so=size", "ls"],
  ["ls -I '*.js' src", "ls"],
  ["ls -Inode_modules", "ls"],
  ["ls --ignore=build", "ls"],
  ["ls --hide=x -w 80", "ls"],
  ["ls -L", X("follows links")],
  ["ls --dereference src", X("follows links")],
  ["ls --deref src", X("ambiguous")],
  ["ls -lL src", X("follows links")],
  ["ls ..", X("outside the project")],
  ["ls /", X("outside the project")],
  ["ls /etc", X("outside")],
  ["ls out-link", X("outside")],
  ["ls in-link", "ls"],
  ["ls -- -rf", "ls"],
  ["ls --frobnicate", X("not on mm's list")],
  ["ls -j", X("not on mm's list")],
  ["ls --color=always --time-style=long-iso src", "ls"],
  ["ls --full-time", "ls"],
  ["ls --width", X("needs a value")],
  ["ls --all=yes", X("takes no value")],
  ["ls src/../..", X("outside")],
  ["ls ./src/../docs", "ls"],
  ["ls nonexistent", "ls"],
  ["ls .env", X("secret")],
  ["ls id_rsa", X("secret")],
  ["ls ~", X()],
  ["ls *.ts", X()],
  ["ls \"src\"", "ls"],
  ["ls 'docs'", "ls"],
  ["/bin/ls", X("/bin/ls is not")],
  ["./ls", X("is not a read-only command")],
  // --- cat, head, tail, wc, file, stat, du, pwd, tree, echo
  ["cat README.md", "cat"],
  ["cat -n src/a.ts src/b.ts", "cat"],
  ["cat -A README.md", "cat"],
  ["cat --number README.md", "cat"],
  ["cat --num README.md", X("ambiguous")],
  ["cat --show-all README.md", "cat"],
  ["cat --show README.md", X("ambiguous")],
  ["cat in-link", "cat"],
  ["cat -", "cat"],
  ["cat", "cat"],
  ["cat /proc/self/environ", X("outside")],
  ["cat server.pem", X("secret")],
  ["cat tls.key", X("secret")],
  ["cat id_rsa", X("secret")],
  ["cat .npmrc", X("secret")],
  ["cat src/../.env", X("secret")],
  ["cat -- .env", X("secret")],
  ["cat -z README.md", X("not on mm's list")],
  ["head README.md", "head"],
  ["head -n 20 src/a.ts", "head"],
  ["head -n20 src/a.ts", "head"],
  ["head -20 src/a.ts", "head"],
  ["head -n -5 src/a.ts", "head"],
  ["head --lines=5 README.md", "head"],
  ["head --lines 5 README.md", "head"],
  ["head --li=5 README.md", "head"],
  ["head -c 100 README.md", "head"],
  ["head -qv src/a.ts src/b.ts", "head"],
  ["head -n 5 /etc/shadow", X("outside")],
  ["head -n ../x README.md", "head"],
  ["head -n", X("needs a value")],
  ["head .env", X("secret")],
  ["tail log.txt", "tail"],
  ["tail -n 50 log.txt", "tail"],
  ["tail -5 log.txt", "tail"],
  ["tail -c 100 log.txt", "tail"],
  ["tail -f log.txt", X("never ends")],
  ["tail -F log.txt", X("never ends")],
  ["tail -nf 5 log.txt", "tail"],
  ["tail --follow log.txt", X("never ends")],
  ["tail --fo=name log.txt", X("never ends")],
  ["tail --f log.txt", X("never ends")],
  ["tail --retry log.txt", X("never ends")],
  ["tail --pid=1 log.txt", X("never ends")],
  ["tail --s log.txt", X("ambiguous")],
  ["tail ---presume-input-pipe log.txt", X()],
  ["tail ../x", X("outside")],
  ["wc -l src/a.ts", "wc"],
  ["wc -lwc README.md", "wc"],
  ["wc --lines README.md", "wc"],
  ["wc --l README.md", "wc"],
  ["wc --files0-from=list.txt", X("names of the files")],
  ["wc --files0=list.txt", X("names of the files")],
  ["wc --f=list.txt", X("names of the files")],
  ["wc ../../etc/passwd", X("outside")],
  ["file README.md", "file"],
  ["file -b --mime-type src/a.ts", "file"],
  ["file -i README.md", "file"],
  ["file -C -m magic", X("compiled magic")],
  ["file -p README.md", X("access times")],
  ["file -z a.gz", X("uncompress")],
  ["file --uncompress a.gz", X("uncompress")],
  ["file --unc a.gz", X("ambiguous")],
  ["file -m /tmp/magic README.md", X("magic files")],
  ["file -f list.txt", X("names of the files")],
  ["file --files-from list.txt", X("names of the files")],
  ["file -S README.md", X("sandbox")],
  ["file /bin/ls", X("outside")],
  ["stat package.json", "stat"],
  ["stat -c %s README.md", "stat"],
  ["stat --format=%y README.md", "stat"],
  ["stat -L in-link", "stat"],
  ["stat /etc/passwd", X("outside")],
  ["du -sh .", "du"],
  ["du -sh src docs", "du"],
  ["du -h --max-depth=1", "du"],
  ["du -d 1 .", "du"],
  ["du --exclude=node_modules .", "du"],
  ["du -X docs/guide.md .", "du"],
  ["du --exclude-from=/etc/passwd .", X("outside")],
  ["du -L .", X("follows links")],
  ["du --files0-from=x", X("names of the files")],
  ["du -sh ..", X("outside")],
  ["du -sh /", X("outside")],
  ["pwd", "pwd"],
  ["pwd -P", "pwd"],
  ["pwd src", X("takes no arguments")],
  ["tree", "tree"],
  ["tree -L 2", "tree"],
  ["tree -La 2 .", "tree"],
  ["tree -a -I node_modules src", "tree"],
  ["tree --gitignore --dirsfirst", "tree"],
  ["tree -J", "tree"],
  ["tree -o out.txt", X("writes its listing")],
  ["tree -Lo 2 out.html", X("writes its listing")],
  ["tree -R -L 1", X("writes a listing file")],
  ["tree -l", X("follows links")],
  ["tree --fromfile list.txt", X("names of the files")],
  ["tree --gitfile=/etc/gitignore", X("outside")],
  ["tree --hintro ../intro.html", X("outside")],
  ["tree --dirs", X("not on mm's list")],
  ["tree ..", X("outside")],
  ["tree out-link", X("outside")],
  ["echo hello", "echo"],
  ["echo 'a; b'", "echo"],
  ["echo \"a | b\"", "echo"],
  ["echo -n x", "echo"],
  ["echo --help", "echo"],
  ["echo ../../etc/passwd", "echo"],
  ["echo x > out.txt", X("a redirection")],
  // --- grep and rg
  ["grep foo README.md", "grep"],
  ["grep -n TODO src/a.ts src/b.ts", "grep"],
  ["grep -in 'a b' src/a.ts", "grep"],
  ["grep -e foo -e bar src/a.ts", "grep"],
  ["grep -E 'a|b' README.md", "grep"],
  ["grep -c x README.md", "grep"],
  ["grep -2 x README.md", "grep"],
  ["grep -A 3 -B2 x README.md", "grep"],
  ["grep --color=auto x README.md", "grep"],
  ["grep --col x README.md", X("ambiguous")],
  ["grep -f docs/guide.md README.md", "grep"],
  ["grep -f /etc/passwd README.md", X("outside")],
  ["grep --file=../patterns README.md", X("outside")],
  ["grep -rn TODO src", X("reads every file")],
  ["grep -R x .", X("reads every file")],
  ["grep --recursive x .", X("reads every file")],
  ["grep --rec x .", X("reads every file")],
  ["grep -d recurse x .", X("reads every file")],
  ["grep --directories=recurse x .", X("reads every file")],
  ["grep foo /etc/passwd", X("outside")],
  ["grep foo .env", X("secret")],
  ["grep -e foo .env", X("secret")],
  ["grep -e foo ../x", X("outside")],
  ["grep --reg=foo ../x", X("outside")],
  ["grep --regexp foo ../x", X("outside")],
  ["grep -ie foo ../x", X("outside")],
  ["grep ../x README.md", "grep"],
  ["grep foo -- ../x", X("outside")],
  ["grep --exclude-from=/etc/x foo README.md", X("outside")],
  ["grep --label=x foo", "grep"],
  ["rg foo", X("searches the whole directory")],
  ["rg foo README.md calc.py", "rg"],
  ["rg foo src/a.ts", "rg"],
  ["rg foo src", X("rg src searches a whole directory")],
  ["rg -n 'x y' .", X("searches a whole directory")],
  ["rg -n 'x y' README.md", "rg"],
  ["rg -i -g '*.ts' foo src", X("searches a whole directory")],
  ["rg -i foo src/a.ts src/b.ts", "rg"],
  ["rg --type ts foo", X("searches the whole directory")],
  ["rg -tts foo src/a.ts", "rg"],
  ["rg -A3 foo calc.py", "rg"],
  ["rg --files", "rg"],
  ["rg --files src", "rg"],
  ["rg --files ..", X("outside")],
  ["rg -e foo -e bar src", X("searches a whole directory")],
  ["rg -e foo -e bar src/a.ts", "rg"],
  ["rg --json foo README.md", "rg"],
  ["rg foo ..", X("outside")],
  ["rg foo out-link", X("outside")],
  ["rg foo .env", X("secret")],
  ["rg --pre ./x foo", X("runs the program")],
  ["rg --pre=./x foo", X("runs the program")],
  ["rg --pre-glob '*.pdf' foo", X("runs the program")],
  ["rg -z foo", X("uncompress")],
  ["rg --search-zip foo", X("uncompress")],
  ["rg -L foo", X("follows links")],
  ["rg --hidden foo", X("hidden or ignored")],
  ["rg -. foo", X("hidden or ignored")],
  ["rg -uu foo", X("hidden or ignored")],
  ["rg --no-ignore foo", X("hidden or ignored")],
  ["rg --no-ignore-vcs foo", X("hidden or ignored")],
  ["rg --hid foo", X("not on mm's list")],
  ["rg --ignore-file /etc/ignore foo", X("outside")],
  ["rg -f /etc/patterns src", X("outside")],
  ["rg -f=../patterns src", X("outside")],
  ["rg --hostname-bin=/tmp/evil foo", X("not on mm's list")],
  ["rg --frobnicate foo", X("not on mm's list")],
  // --- rg: --files as the value of another option is no listing (a breaking pass)
  ["rg -e --files -e '' .", X("searches a whole directory")],
  ["rg -r --files foo .", X("searches a whole directory")],
  ["rg -g --files foo .", X("searches a whole directory")],
  ["rg -e --type-list", X("searches the whole directory")],
  // --- git: its read-only subcommands
  ["git status", "git status"],
  ["git status --short", "git status"],
  ["git status -sb", "git status"],
  ["git status --porcelain=v2", "git status"],
  ["git status -uno", "git status"],
  ["git status src", "git status"],
  ["git status ../other", X("outside")],
  ["git --no-pager status", "git status"],
  ["git -P log -3", "git log"],
  ["git diff", "git diff"],
  ["git diff --stat", "git diff"],
  ["git diff --cached", "git diff"],
  ["git diff HEAD~1 -- src/a.ts", "git diff"],
  ["git diff main..feature", "git diff"],
  ["git diff -U10 src/a.ts", "git diff"],
  ["git diff --word-diff=color", "git diff"],
  ["git diff --no-ext-diff --no-textconv", "git diff"],
  ["git diff --output=/outside/file", X("writes a file")],
  ["git diff --outp=/x", X("not on mm's list")],
  ["git diff --ext-diff", X("external diff")],
  ["git diff --textconv", X("text conversion")],
  ["git diff --no-index a b", X("outside the repository")],
  ["git diff /etc/passwd /dev/null", X("outside")],
  ["git diff -O/tmp/order", X("runs the program")],
  ["git diff -- ../x", X("outside")],
  ["git diff -- .env", X("secret")],
  ["git log", "git log"],
  ["git log --oneline -5", "git log"],
  ["git log --oneline --graph --all", "git log"],
  ["git log -p -n 3 src/a.ts", "git log"],
  ["git log -n5", "git log"],
  ["git log --author=me --since='2 weeks ago'", "git log"],
  ["git log --author me", "git log"],
  ["git log --format='%h %s'", "git log"],
  ["git log --pretty=oneline", "git log"],
  ["git log --stat", "git log"],
  ["git log -S needle", "git log"],
  ["git log -Sneedle", "git log"],
  ["git log --follow -- src/a.ts", "git log"],
  ["git log --output=/tmp/x", X("git log --output writes a file")],
  ["git log --output /tmp/x", X("git log --output writes a file")],
  ["git log --textconv", X("text conversion")],
  ["git log --show-signature", X("gpg")],
  ["git log -L 1,2:src/a.ts", X()],
  ["git log --help", X("manual page")],
  ["git log --oneline /etc", X("outside")],
  ["git log --grep x ../y", X("outside")],
  ["git log --exec=x", X("not on mm's list")],
  ["git show", "git show"],
  ["git show HEAD~1", "git show"],
  ["git show HEAD:src/a.ts", "git show"],
  ["git show --stat HEAD", "git show"],
  ["git show -s --format=%B HEAD", "git show"],
  ["git show HEAD:.env", X("secret")],
  ["git show --output=x HEAD", X("writes a file")],
  ["git branch", "git branch"],
  ["git branch -a", "git branch"],
  ["git branch -vv", "git branch"],
  ["git branch --list 'feat'", "git branch"],
  ["git branch -l feature", "git branch"],
  ["git branch --show-current", "git branch"],
  ["git branch --contains HEAD~3", "git branch"],
  ["git branch --merged main", "git branch"],
  ["git branch feature", X("makes a branch")],
  ["git branch -a feature", X("makes a branch")],
  ["git branch -d feature", X("changes branches")],
  ["git branch -D feature", X("changes branches")],
  ["git branch -m old new", X("changes branches")],
  ["git branch --delete feature", X("changes branches")],
  ["git branch -f main HEAD~1", X("changes branches")],
  ["git branch --set-upstream-to=origin/main", X("changes branches")],
  ["git blame src/a.ts", "git blame"],
  ["git blame -L 1,20 src/a.ts", "git blame"],
  ["git blame -w -M -C src/a.ts", "git blame"],
  ["git blame --contents=/etc/passwd src/a.ts", X("outside")],
  ["git blame --contents ../x src/a.ts", X("outside")],
  ["git blame --ignore-revs-file=.git-blame-ignore-revs src/a.ts", "git blame"],
  ["git blame ../x", X("outside")],
  ["git rev-parse HEAD", "git rev-parse"],
  ["git rev-parse --show-toplevel", "git rev-parse"],
  ["git rev-parse --abbrev-ref HEAD", "git rev-parse"],
  ["git rev-parse --short HEAD", "git rev-parse"],
  ["git rev-parse --git-path hooks", "git rev-parse"],
  ["git rev-parse --parseopt", X("not on mm's list")],
  ["git ls-files", "git ls-files"],
  ["git ls-files -m", "git ls-files"],
  ["git ls-files --others --exclude-standard", "git ls-files"],
  ["git ls-files -z src", "git ls-files"],
  ["git ls-files -X /etc/x", X("outside")],
  ["git ls-files ../x", X("outside")],
  ["git version", "git version"],
  ["git version --build-options", "git version"],
  // --- git: not read-only
  ["git log -p -- :/infra", X("from the repository's top")],
  ["git log -p -- ':(top)infra'", X("from the repository's top")],
  ["git show :README.md", X("from the repository's top")],
  ["git show HEAD:../x", X("outside")],
  ["git log --pretty=%GG", X("gpg")],
  ["git log '--format=%h %G?'", X("gpg")],
  ["git", X("without a subcommand")],
  ["git -c core.pager=sh log", X("git -c")],
  ["git -ccore.pager=sh log", X("git -ccore.pager=sh")],
  ["git -c alias.x=!sh x", X()],
  ["git --config-env=core.pager=X log", X("changes how git runs")],
  ["git --exec-path=/tmp status", X("changes how git runs")],
  ["git --exec-path", X("changes how git runs")],
  ["git -C /elsewhere status", X("not a read-only option of git")],
  ["git --git-dir=/tmp/x status", X("not a read-only option of git")],
  ["git --work-tree=/ status", X()],
  ["git --help", X()],
  ["git help log", X("git help is not")],
  ["git my-alias", X("nor may an alias be")],
  ["git lg", X("nor may an alias be")],
  ["git add -A", X("git add is not")],
  ["git commit -m 'fix: it'", X("git commit is not")],
  ["git push --force", X("git push is not")],
  ["git pull", X()],
  ["git fetch", X()],
  ["git clean -fdx", X("git clean is not")],
  ["git stash", X()],
  ["git stash list", X()],
  ["git restore .", X()],
  ["git switch main", X()],
  ["git merge feature", X()],
  ["git rebase --exec make main", X()],
  ["git config core.pager sh", X("git config is not")],
  ["git config --list", X()],
  ["git grep -O x", X()],
  ["git grep foo", X()],
  ["git submodule foreach ls", X()],
  ["git bisect run make", X()],
  ["git difftool", X()],
  ["git format-patch -o /elsewhere HEAD~1", X()],
  ["git tag", X()],
  ["git remote -v", X()],
  ["git shortlog -sn", X()],
  // --- programs not on the list: their exact line only
  ["npm test -- -u", X("npm is not")],
  ["npm run build", X()],
  ["npm ci", X()],
  ["npm install", X()],
  ["npm ls", X()],
  ["pnpm test", X()],
  ["yarn test", X()],
  ["bun test", X()],
  ["cargo build --release", X()],
  ["cargo test", X()],
  ["go test ./...", X()],
  ["make", X()],
  ["make test", X()],
  ["python3 -m pytest -q", X()],
  ["python -m pip list", X()],
  ["node build.js", X()],
  ["deno test", X()],
  ["tsc --noEmit", X()],
  ["eslint src", X()],
  ["npx eslint", X()],
  ["find . -name x.ts", X("find is not")],
  ["find . -delete", X()],
  ["sed 's/a/b/g' file.txt", X()],
  ["awk '{print $1}' file.txt", X()],
  ["cp a.txt b.txt", X()],
  ["mv a.txt b.txt", X()],
  ["mkdir -p build/out", X()],
  ["touch x", X()],
  ["chmod +x a.sh", X()],
  ["curl -s https://example.com", X()],
  ["wget https://example.com", X()],
  ["jq .name package.json", X()],
  ["diff a.txt b.txt", X()],
  ["sort a.txt", X()],
  ["uniq a.txt", X()],
  ["less README.md", X("less is not")],
  ["more README.md", X()],
  ["vim README.md", X()],
  ["date", X()],
  ["whoami", X()],
  ["uname -a", X()],
  ["which node", X()],
  ["env", X()],
  ["sudo ls", X()],
  ["xargs cat", X()],
  ["timeout 5 ls", X("timeout is not")],
  ["nice ls", X()],
  ["bash -c ls", X()],
  ["sh -c 'ls'", X()],
  ["command ls", X()],
  ["exec ls", X()],
  ["docker ps", X()],
  ["ssh host ls", X()],
  ["dd if=a of=/dev/sda", X()],
  ["rsync -a src/ dst/", X()],
  ["\"npm\" test", X()],
  // --- syntax that is never resolved: the exact line only
  ["ls; rm -rf x", X("more than one command")],
  ["ls && rm -rf x", X()],
  ["ls || true", X()],
  ["cat README.md | sh", X("a pipe")],
  ["ls | head", X("a pipe")],
  ["ls > out.txt", X("a redirection")],
  ["cat < README.md", X("a redirection")],
  ["ls 2>&1", X()],
  ["cat <<EOF\nx\nEOF", X()],
  ["cat <<< x", X()],
  ["ls \"$\\\n(touch /elsewhere/p1)\"", X()],
  ["ls $'\\'' ; touch /elsewhere/p2 ; echo \\'", X()],
  ["echo $HOME", X()],
  ["echo ${HOME}", X()],
  ["cat $(echo .env)", X()],
  ["ls `pwd`", X()],
  ["cat \"$(rm -rf x)\"", X()],
  ["cat <(ls a)", X()],
  ["ls -l \\\n -a", X()],
  ["ls # c", X()],
  ["(ls)", X()],
  ["{ ls; }", X()],
  ["FOO=1 ls", X("a variable assignment")],
  ["PATH=/tmp:$PATH ls", X()],
  ["sleep 10 &", X()],
  ["ls\nrm -rf x", X()],
  ["cat 'unterminated", X()],
  ["ls {a,b}", X()],
  ["ls src/?.ts", X()],
  ["ls [ab].ts", X()],
  ["cat ~/.ssh/id_rsa", X()],
  ["cat a\\ b", X()],
  ["! ls", X()],
  ["if true; then ls; fi", X()],
  ["for f in a b; do ls $f; done", X()],
  ["while true; do ls; done", X()],
  ["f() { ls; }", X()],
  ["[[ -f x ]]", X()],
  ["export A=1", X()],
  ["echo $((1+2))", X()],
  ["", X("an empty command")],
  ["   ", X()]
]

/** What a remembered answer was given on, and the rows it must cover: exactly those whose key it names. */
const REMEMBERED: ReadonlyArray<Scope> = [
  { _tag: "CommandPrefix", words: ["ls"] },
  { _tag: "CommandPrefix", words: ["cat"] },
  { _tag: "CommandPrefix", words: ["grep"] },
  { _tag: "CommandPrefix", words: ["rg"] },
  { _tag: "CommandPrefix", words: ["tail"] },
  { _tag: "CommandPrefix", words: ["git", "log"] },
  { _tag: "CommandPrefix", words: ["git", "status"] },
  { _tag: "CommandPrefix", words: ["git", "branch"] },
  // rows an older mm remembered, or a hand-written file holds: they cover nothing now
  { _tag: "CommandPrefix", words: ["rm"] },
  { _tag: "CommandPrefix", words: ["rm", "-rf"] },
  { _tag: "CommandPrefix", words: ["npm", "test"] },
  { _tag: "CommandPrefix", words: ["node"] },
  { _tag: "CommandPrefix", words: ["node", "--version"] },
  { _tag: "CommandPrefix", words: ["python3"] },
  { _tag: "CommandPrefix", words: ["sed"] },
  { _tag: "CommandPrefix", words: ["sed", "-n"] },
  { _tag: "CommandPrefix", words: ["pytest"] },
  { _tag: "CommandPrefix", words: ["tar"] },
  { _tag: "CommandPrefix", words: ["git"] },
  { _tag: "CommandPrefix", words: ["git", "checkout"] },
  { _tag: "CommandPrefix", words: ["git", "reset"] },
  { _tag: "CommandPrefix", words: ["git", "--version"] },
  { _tag: "CommandPrefix", words: ["ls", "-la"] },
  { _tag: "CommandPrefix", words: [] }
]

const call = (command: string) => ({ tool: "bash", access: "command" as const, input: { command }, cwd: project.dir })

describe("the approval rule against a table of command lines", () => {
  it("has at least 300 rows, every one different", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(300)
    expect(new Set(TABLE.map(([command]) => command)).size).toBe(TABLE.length)
  })

  for (const [command, expected] of TABLE) {
    it(`${JSON.stringify(command)}: ${expected.startsWith("X") ? `exact${expected.slice(1) === "" ? "" : ` (${expected.slice(1)})`}` : expected}`, () => {
      const own = classifyCommand(reader.read, command, project.dir)
      const choices = alwaysChoices(call(command), reader.read)
      if (expected.startsWith("X")) {
        expect(own._tag, JSON.stringify(own)).toBe("ExactOnly")
        if (own._tag === "ExactOnly") expect(own.reason).toContain(expected.slice(1))
        // offered: its exact line, remembered or for this conversation; never a reusable answer
        expect(choices.map((c) => [c.scope, c.keep])).toEqual([
          [{ _tag: "ExactCommand", command: command.trim() }, "project"],
          [{ _tag: "ExactCommand", command: command.trim() }, "session"]
        ])
      } else {
        expect(own, JSON.stringify(own)).toEqual({ _tag: "ReadOnly", key: expected.split(" ") })
        expect(choices.map((c) => [c.scope, c.keep])).toEqual([
          [{ _tag: "CommandPrefix", words: expected.split(" ") }, "project"]
        ])
      }
      // covered by a remembered reusable answer exactly when it is read-only and that answer names its key
      for (const scope of REMEMBERED) {
        const covers = scope._tag === "CommandPrefix" && !expected.startsWith("X") &&
          scope.words.join(" ") === expected
        expect(isAllowed([scope], call(command), reader.read), `${JSON.stringify(scope)}`).toBe(covers)
      }
      // its own exact line covers it (outer whitespace aside), and nothing else of the table
      const exact: Scope = { _tag: "ExactCommand", command: command.trim() }
      if (command.trim() !== "") expect(isAllowed([exact], call(`  ${command} `), reader.read)).toBe(true)
      const other = TABLE.find(([c]) => c.trim() !== command.trim())![0]
      expect(isAllowed([exact], call(other), reader.read)).toBe(false)
    })
  }

  it("the issue's exact answers cover their own line and not the destructive form", () => {
    const allows = (given: string, later: string) =>
      isAllowed([{ _tag: "ExactCommand", command: given }], call(later), reader.read)
    expect(allows("rm -rf build", "rm -rf build")).toBe(true)
    expect(allows("rm -rf build", "rm -rf build src .git")).toBe(false)
    expect(allows("git checkout feature", "git checkout -- .")).toBe(false)
    expect(allows("git reset calc.py", "git reset --hard HEAD~1")).toBe(false)
    expect(allows("node --version", "node evil.js")).toBe(false)
    expect(allows("sed -n 1,20p", "sed -n 1,20p README.md '--expr=1e touch …'")).toBe(false)
    expect(allows("npm test", "npm test --prefix /tmp/elsewhere")).toBe(false)
  })

  it("a reusable answer is checked against the later call's own directory", () => {
    const scope: Scope = { _tag: "CommandPrefix", words: ["cat"] }
    const inside = { ...call("cat secret.txt"), cwd: project.outside }
    // inside the other directory, its own file is inside; from the project, the same name is not there
    expect(isAllowed([scope], inside, reader.read)).toBe(true)
    expect(isAllowed([scope], { ...inside, input: { command: `cat ${project.dir}/README.md` } }, reader.read))
      .toBe(false)
  })
})

describe("git and the repository around the project (a breaking pass)", () => {
  const gitIn = (dir: string, ...args: Array<string>) => execFileSync("git", args, { cwd: dir, stdio: "ignore" })
  const keyOf = (command: string, cwd: string) => {
    const own = classifyCommand(reader.read, command, cwd)
    return own._tag === "ReadOnly" ? own.key.join(" ") : `X ${own.reason}`
  }

  it("outside a repository git is never read-only: git diff would compare folders as --no-index", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-norepo-")))
    fs.mkdirSync(path.join(dir, "empty"))
    expect(keyOf("git diff empty .", dir)).toMatch(/^X git outside a repository/)
    expect(keyOf("git status", dir)).toMatch(/^X git outside a repository/)
  })

  it("a project below the repository's top: REV:path and pathspec magic must stay inside the project", () => {
    const top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-mono-")))
    gitIn(top, "init", "-q")
    const app = path.join(top, "app")
    fs.mkdirSync(app)
    fs.mkdirSync(path.join(top, "infra"))
    fs.writeFileSync(path.join(app, "a.ts"), "x\n")
    expect(keyOf("git show HEAD:infra/prod-credentials.txt", app)).toMatch(/^X .*outside the project/)
    expect(keyOf("git show HEAD:app/a.ts", app)).toBe("git show")
    expect(keyOf("git show HEAD:./a.ts", app)).toBe("git show")
    expect(keyOf("git log -p -- :/infra", app)).toMatch(/repository's top/)
  })

  it("a hook git status may run, or a key on its section's header line, makes git not read-only", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-hooked-")))
    gitIn(dir, "init", "-q")
    expect(keyOf("git status", dir)).toBe("git status")
    const config = path.join(dir, ".git", "config")
    const before = fs.readFileSync(config, "utf8")
    fs.appendFileSync(config, `[core] fsmonitor = "touch /tmp/x; false"\n`)
    expect(keyOf("git status", dir)).toMatch(/names a program git may run \(fsmonitor\)/)
    fs.writeFileSync(config, `${before}[core]\n\thooksPath = scripts/hooks\n`)
    expect(keyOf("git status", dir)).toMatch(/\(hooksPath\)/)
    fs.writeFileSync(config, before)
    fs.writeFileSync(path.join(dir, ".git", "hooks", "post-index-change"), "#!/bin/sh\n", { mode: 0o755 })
    expect(keyOf("git status", dir)).toMatch(/post-index-change hook/)
  })

  // a megabyte of blank lines held a regular expression for minutes (quadratic in their number)
  it("a configuration of a million blank lines is read at once, and a key after them is found", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-blank-")))
    gitIn(dir, "init", "-q")
    const config = path.join(dir, ".git", "config")
    const before = fs.readFileSync(config, "utf8")
    fs.writeFileSync(config, before + "\n".repeat(1_000_000))
    expect(keyOf("git status", dir)).toBe("git status")
    fs.writeFileSync(config, `${before}${"\n".repeat(1_000_000)}[diff "x"]\r\n \t textconv = cat\n`)
    expect(keyOf("git status", dir)).toMatch(/names a program git may run \(textconv\)/)
    fs.writeFileSync(config, `${before}${" \n".repeat(500_000)}[core]\t\tfsmonitor\n`)
    expect(keyOf("git status", dir)).toMatch(/\(fsmonitor\)/)
  })
})
