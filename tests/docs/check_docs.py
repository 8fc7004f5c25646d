#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What the pages say, checked against the code (the code blocks are compiled: snippets.py).

  check_docs.py flags SOURCE_DIR         every --flag of forewarn-watch named in README.md, docs/*.md,
                                         examples/ (scripts, manifests, rules; not the C++ programs,
                                         which have flags of their own) and packaging/ is in its option
                                         table (tools/watch/options.cpp, flags()) or is one of its
                                         sub-commands' and switches'; every option of the table is in
                                         docs/operators.md's table of flags
  check_docs.py names SOURCE_DIR         every forewarn_* metric named in README.md, docs/ and
                                         examples/ is one the agent writes (tools/watch/metrics.cpp,
                                         tools/watch/kubernetes/node_actions.cpp), and each one it
                                         writes is in docs/operators.md; every forewarn/... taint,
                                         label or annotation, every `Maintenance*`/`Drain*` condition or
                                         Event reason named in the pages (and each reason that
                                         docs/kubernetes.md lists after "reason") is
                                         the Kubernetes room's (tools/watch/kubernetes/), and each of its
                                         names, conditions and Event reasons is in docs/kubernetes.md
  check_docs.py links SOURCE_DIR         in every *.md (not build/, .git/), outside code: each relative
                                         link resolves to a file of the repository, each #anchor to a
                                         heading (GitHub's slugs), and no link leaves the repository
  check_docs.py check_steps SOURCE_DIR   the steps `forewarn-watch check` can print (tools/watch/
                                         check.cpp, main.cpp, clients.cpp, source.hpp, kubernetes/
                                         access.cpp) are the rows of docs/operators.md's table of steps
  check_docs.py clouds_table SOURCE_DIR  README.md's clouds table says of each cloud what its client's
                                         can_approve() gives by default (read from include/forewarn/)

Each prints what it read and found, and exits 1 on any problem, 0 otherwise (2: usage).
"""
import bisect
import fnmatch
import os
import pathlib
import re
import sys
import urllib.parse

# ------------------------------------------------------------------------------------------------
# Markdown, as far as these checks need it
# ------------------------------------------------------------------------------------------------

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


class Page:
    """A text file: its fenced code blocks apart from its prose (HTML comments blanked), and the
    inline code spans of that prose. Offsets are the file's own, so line numbers stay right."""

    def __init__(self, path, text, markdown=True):
        self.path = path
        self.text = text
        self.newlines = [i for i, c in enumerate(text) if c == "\n"]
        self.blocks = []  # (offset, info string, text of the block's lines)
        if not markdown:
            self.prose = ""
            self.spans = []
            return
        out = []
        fence = None
        block_start = 0
        offset = 0
        for line in text.splitlines(keepends=True):
            m = FENCE.match(line.rstrip("\n"))
            if fence is None and m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                info = m.group(2).strip()
                block_start = offset + len(line)
                out.append(blank(line))
            elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                self.blocks.append((block_start, info, text[block_start:offset]))
                fence = None
                out.append(blank(line))
            elif fence is not None:
                out.append(blank(line))
            else:
                out.append(line)
            offset += len(line)
        prose = "".join(out)
        prose = re.sub(r"<!--.*?-->", lambda m: blank(m.group(0)), prose, flags=re.S)
        self.prose = prose
        self.spans = code_spans(prose)  # (start, end) of each span's content

    def line(self, offset):
        return bisect.bisect_left(self.newlines, offset) + 1

    def masked(self):
        """The prose with each inline code span's content blanked (links and plain text only)."""
        chars = list(self.prose)
        for s, e in self.spans:
            for i in range(s, e):
                if chars[i] != "\n":
                    chars[i] = " "
        return "".join(chars)


def blank(s):
    return re.sub(r"[^\n]", " ", s)


BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")


def code_spans(prose):
    """CommonMark's code spans: a run of N backticks to the next run of exactly N, within a
    paragraph (a blank line ends the search)."""
    spans = []
    i = 0
    n = len(prose)
    while i < n:
        if prose[i] != "`":
            if prose[i] == "\\" and i + 1 < n and prose[i + 1] == "`":
                i += 2
                continue
            i += 1
            continue
        j = i
        while j < n and prose[j] == "`":
            j += 1
        run = j - i
        k = j
        found = None
        while k < n:
            if prose[k] == "\n" and BLANK_LINE.match(prose, k):
                break
            if prose[k] == "`":
                e = k
                while e < n and prose[e] == "`":
                    e += 1
                if e - k == run:
                    found = (j, k)
                    break
                k = e
                continue
            k += 1
        if found:
            spans.append(found)
            i = found[1] + run
        else:
            i = j
    return spans


def slug(heading):
    """GitHub's anchor for a heading's text: its rendered text lower-cased, each space a '-', and
    every character dropped that is not a letter, a digit, '-' or '_'."""
    parts = re.split(r"(`+)(.+?)\1", heading)  # code spans: [text, ticks, code, text, ...]
    t = ""
    for i in range(0, len(parts), 3):
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", parts[i])  # links and images: their text
        text = re.sub(r"<[^>]+>", "", text)                           # HTML tags
        t += text.replace("*", "").replace("~~", "")
        if i + 2 < len(parts):
            t += parts[i + 2]                                          # a code span's text, as it is
    t = t.strip().lower()
    return "".join(c for c in t.replace(" ", "-") if c.isalnum() or c in "-_")


def anchors(page):
    """Every anchor a page has: its headings' slugs, with '-1', '-2', ... for repeats; and <a id>."""
    seen = {}
    out = set()
    lines = page.prose.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", line)
        text = None
        if m:
            text = m.group(2)
        elif i > 0 and re.match(r"^ {0,3}(=+|-+)[ \t]*$", line) and lines[i - 1].strip() \
                and not re.match(r"^\s*([-*+]\s|\d+[.)]\s|\||#|>)", lines[i - 1]):
            text = lines[i - 1].strip()
        if text is None:
            continue
        s = slug(text)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    for m in re.finditer(r"<a\s+(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", page.prose):
        out.add(m.group(1))
    return out


def read(path):
    return path.read_text(encoding="utf-8", errors="replace")


def repo_files(root, name_pattern):
    """The repository's files matching the pattern, build trees (build/, build-*/) and .git/ left out."""
    out = []
    for d, dirs, files in os.walk(root):
        if pathlib.Path(d) == root:
            dirs[:] = [x for x in dirs if x != "build" and not x.startswith("build-")]
        dirs[:] = sorted(x for x in dirs if x != ".git")
        out += [pathlib.Path(d) / f for f in sorted(files) if fnmatch.fnmatch(f, name_pattern)]
    return out


def markdown_files(root):
    return repo_files(root, "*.md")


def rel(root, p):
    return p.relative_to(root).as_posix()


# ------------------------------------------------------------------------------------------------
# flags
# ------------------------------------------------------------------------------------------------

# Programs that are clearly not forewarn-watch: the flags of their command lines are theirs.
OTHER_PROGRAMS = {
    "cmake", "ctest", "ninja", "make", "kubectl", "podman", "docker", "buildah", "curl", "wget", "haproxy",
    "systemctl", "systemd-run", "journalctl", "apt-get", "apt", "dpkg", "dpkg-deb", "lintian", "pkg-config",
    "c++", "g++", "gcc", "clang", "clang++", "cc", "ld", "ld.gold", "nm", "size", "strip", "objdump", "valgrind",
    "callgrind_annotate", "cg_annotate", "perf", "aws", "gcloud", "az", "git", "grep", "sed", "awk", "tail", "head",
    "tee", "sort", "jq", "python3", "python", "bash", "sh", "npm", "node", "mmdebstrap", "useradd", "groupadd",
    "adduser", "addgroup", "deluser", "delgroup", "deb-systemd-helper", "deb-systemd-invoke", "dh_installsystemd",
    "help2man", "wine", "etcd", "etcdctl", "kube-apiserver", "kube-controller-manager", "helm", "openssl", "ssh",
    "setarch", "promtool", "socat", "tar", "unzip", "zip", "x86_64-w64-mingw32-g++", "install", "mkdir", "rm",
    "cp", "mv", "chmod", "chown", "ln", "cat", "echo", "printf", "test", "ls", "find", "xargs", "kill", "sleep",
    "seq", "mktemp", "timeout", "taskset", "chrt", "strace", "gdb", "go", "sha256sum", "uname", "id", "getent",
    "runuser", "su", "tc", "ip", "iptables", "nft", "ss", "nc", "dig", "host", "hey", "ab", "wrk",
    "github", "ccache", "sccache", "bwrap", "unshare", "nsenter", "chroot", "cmd", "powershell", "sc", "sc.exe",
}
# Words before a command's program: the shell's, a prompt, a Dockerfile's instructions, YAML's '-'.
LEAD_WORDS = {
    "sudo", "env", "exec", "time", "nohup", "nice", "command", "then", "do", "else", "elif", "if", "while",
    "until", "!", "$", "#", "//", "-", ">", "RUN", "CMD", "ENTRYPOINT", "{", "}",
}
# Programs that run another: on their line, the flags after forewarn-watch (or its image) are its.
RUNNERS = {"podman", "docker", "kubectl", "systemd-run", "wine", "setarch", "timeout",
           "runuser", "su", "chroot", "nsenter", "unshare", "taskset", "chrt", "strace", "gdb", "valgrind"}
AGENT = {"forewarn-watch", "forewarn-watch.exe"}

# Flags a page names in its prose, without their command, that are another program's. Each is
# named here because nothing in the text says whose it is; anything else is the agent's or one of
# this repository's programs' (read from their sources, below).
OTHER_PROSE_FLAGS = {
    "gc-sections": "GNU ld's, in docs/benchmarks.md's and docs/building.md's size tables",
    "icf": "gold's --icf=safe, in docs/benchmarks.md's size table",
    "param": "g++'s --param max-inline-insns-single, in docs/benchmarks.md",
    "trace-children": "valgrind's, in docs/benchmarks.md's account of the compile counts",
    "prefer-no-schedule-taint": "kured's, in docs/kubernetes.md's comparison table",
    "info": "lintian's --info, in docs/building.md",
    "name": "the generic `--name VALUE` of docs/operators.md's sentence on how flags are written",
}

# This repository's other programs, whose parsers' flags a page may name with no program beside
# them (the emulator's `--speed X`, the harness's `--units`): the emulator, the example programs,
# the benchmark and test scripts, CI and ./quickstart. Read from the parsers only (C++ `== "--x"`,
# Python's add_argument("--x"), shell `--x)` case labels and `== --x` tests), not from the flags
# these programs pass on to others.
PROJECT_PROGRAM_SOURCES = (
    "tools/emulator/*.cpp", "examples/**/*.cpp", "tests/bench/**/*.py", "tests/bench/**/*.sh", "tests/kubernetes/*.py",
    "tests/fuzz/*.sh", ".ci/run", "quickstart",
)
PARSER_FLAG = re.compile(r"""==\s*["']?--([a-z][a-z0-9-]*)|add_argument\(\s*["']--([a-z][a-z0-9-]*)|^\s*(?:[\w|-]*\|)?--([a-z][a-z0-9-]*)(?:\|[\w|-]*)?\)""", re.M)

FLAG = re.compile(r"(?<![\w./-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def agent_options(root):
    """The option table's names (flags() in tools/watch/options.cpp, with cloud_flags.cpp's rows), and the agent's other
    command-line words: check's own (check.cpp), the Windows service's (service_windows.cpp), and
    the switches parse() answers itself (--help, -h, --version)."""
    src = read(root / "tools/watch/options.cpp")
    start = src.find("const std::vector<flag>& flags()")
    end = src.find("\nvoid usage(", start)
    if start < 0 or end < 0:
        raise SystemExit("tools/watch/options.cpp: flags() or usage() not found; this script needs updating")
    table = re.findall(r'^\s*\{"([a-z0-9-]+)",', src[start:end], re.M)
    # The rows of a cloud's own API, which flags() takes from cloud_flags() (cloud_flags.cpp).
    if "cloud_flags()" in src[start:end]:
        rows = read(root / "tools/watch/cloud_flags.cpp")
        at = rows.find("std::vector<flag> cloud_flags()")
        if at < 0:
            raise SystemExit("tools/watch/cloud_flags.cpp: cloud_flags() not found; this script needs updating")
        table += re.findall(r'^\s*\{"([a-z0-9-]+)",', rows[at:], re.M)
    extra = set(re.findall(r'== "--([a-z0-9-]+)"', src[end:]))
    for f in ("tools/watch/check.cpp", "tools/watch/platform/service_windows.cpp"):
        p = root / f
        if p.exists():
            extra |= set(re.findall(r'== "--([a-z0-9-]+)"', read(p)))
    return table, extra - set(table)


def project_program_flags(root):
    out = set()
    for pattern in PROJECT_PROGRAM_SOURCES:
        paths = [root / pattern] if "*" not in pattern else root.glob(pattern)
        for p in paths:
            if not p.is_file():
                continue
            for m in PARSER_FLAG.finditer(read(p)):
                out.add(next(g for g in m.groups() if g))
    return out


def program_of(word, arrays):
    w = word.strip("\"'[](){},;")
    m = re.fullmatch(r"\$\{?(\w+)(?:\[@\])?\}?", w)
    if m:
        return arrays.get(m.group(1), "$")
    if w.endswith(".ci/run"):
        return ".ci/run"
    return re.split(r"[/\\]", w)[-1]


def kind_of(prog):
    if prog in AGENT:
        return "agent"
    if prog.startswith("forewarn-") or prog.endswith((".py", ".sh")) or prog in ("quickstart", ".ci/run") \
            or prog in OTHER_PROGRAMS:
        return "other"
    return "bare"


def command_flags(text, base, arrays):
    """The --flags of a text read as command lines: [(offset, flag, owner, program)], owner being
    'agent', 'other' or 'bare' (no program says whose: the agent's or another of this repository's)."""
    joined = re.sub(r"[\\^][ \t]*\n", lambda m: " " * len(m.group(0)), text)
    out = []
    clauses = re.split(r"(\|\||&&|[|;`\n]|\$\(|\)|: |(?<![\w$])\()", joined)
    offset = 0
    prev_sep = ""
    for piece in clauses:
        if piece is None:
            continue
        is_sep = re.fullmatch(r"\|\||&&|[|;`\n]|\$\(|\)|: |\(", piece) is not None
        if is_sep:
            offset += len(piece)
            prev_sep = piece
            continue
        clause = piece
        tokens = [(m.start(), m.group(0)) for m in re.finditer(r"\S+", clause)]
        prog, owner, agent_from = None, "bare", None
        # an array appended to (NAME+=( ... )): its program is the array's first word
        before = joined[max(0, offset - 40):offset]
        am = re.search(r"(\w+)\+?=\($", before)
        i = 0
        if am and prev_sep == "(":
            prog = arrays.get(am.group(1))
            owner = kind_of(prog) if prog else "bare"
            i = len(tokens)
        while i < len(tokens):
            t = tokens[i][1]
            bare_t = t.strip("\"'[],")
            if t in LEAD_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\+?=", t) or t.startswith("#") \
                    or (t.startswith("-") and not t.startswith("--") and bare_t != "--"):
                i += 2 if t in ("-u", "-g") else 1  # sudo -u USER
                continue
            if bare_t.startswith("--"):
                break
            prog = program_of(t, arrays)
            owner = kind_of(prog)
            i += 1
            break
        if owner == "other" and prog in RUNNERS:
            for j in range(i, len(tokens)):
                w = tokens[j][1].strip("\"'[],")
                if w.startswith("-") or "=" in w or (j > i and re.fullmatch(r"--[\w-]+", tokens[j - 1][1])):
                    continue  # a flag's value (--name forewarn-watch, EnvironmentFile=-/etc/default/forewarn-watch)
                if re.split(r"[/\\]", w)[-1] in AGENT or re.fullmatch(r"(?:\S+/)?forewarn-watch:\S+", w):
                    agent_from = tokens[j][0]
                    break
        for m in FLAG.finditer(clause):
            who = owner
            if agent_from is not None and m.start() > agent_from:
                who = "agent"
            out.append((base + offset + m.start(), m.group(1), who, prog))
        offset += len(piece)
        prev_sep = ""
    return out


def shell_arrays(text):
    return {m.group(1): program_of(m.group(2), {}) for m in re.finditer(r"\b(\w+)=\(\s*([^\s)]+)", text)}


def preceding_word_is_program(text, offset):
    m = re.search(r"(\S+)\s+$", text[max(0, offset - 60):offset])
    if not m:
        return False
    w = re.sub(r"'s$", "", m.group(1).strip("\"'`([{,;:"))
    return kind_of(program_of(w, {})) == "other"


def flag_pages(root):
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    others = []
    for top in ("examples", "packaging"):
        for p in sorted((root / top).rglob("*")):
            if not p.is_file():
                continue
            if top == "examples" and (p.suffix in (".cpp", ".hpp") or p.name == "CMakeLists.txt"):
                continue  # the example programs, with flags of their own
            if p.suffix in (".md",):
                pages.append(p)
            else:
                others.append(p)
    return pages, others


def flags(source):
    root = pathlib.Path(source)
    table, extra = agent_options(root)
    known = set(table) | extra
    project = project_program_flags(root)
    counts = {"agent": 0, "bare": 0, "other": 0}
    problems = []
    pages, others = flag_pages(root)

    def judge(page, found, text_for_words):
        for off, name, owner, prog in found:
            counts[owner] += 1
            if name in known:
                continue
            where = f"{rel(root, page.path)}:{page.line(off)}"
            if owner == "agent":
                problems.append(f"{where}: --{name} given to forewarn-watch is not one of its options")
            elif owner == "bare":
                if name in project or name in OTHER_PROSE_FLAGS or preceding_word_is_program(text_for_words, off):
                    continue
                problems.append(f"{where}: --{name} is not an option of forewarn-watch (nor of this repository's other "
                                "programs, nor allowed in OTHER_PROSE_FLAGS)")

    for p in pages:
        page = Page(p, read(p))
        for start, info, block in page.blocks:
            judge(page, command_flags(block, start, shell_arrays(block)), page.text)
        for s, e in page.spans:  # a span's line ends are spaces
            judge(page, command_flags(page.prose[s:e].replace("\n", " "), s, {}), page.text)
        masked = page.masked()
        judge(page, [(m.start(), m.group(1), "bare", None) for m in FLAG.finditer(masked)], masked)
    for p in others:
        page = Page(p, read(p), markdown=False)
        judge(page, command_flags(page.text, 0, shell_arrays(page.text)), page.text)

    ops = root / "docs/operators.md"
    rows = set()
    for line in read(ops).splitlines():
        if line.startswith("| `--"):
            rows |= set(re.findall(r"--([a-z0-9-]+)", line.split("|")[1]))
    for name in table:
        if name not in rows:
            problems.append(f"docs/operators.md: --{name} of the option table has no row in the table of flags")
    for name in sorted(rows - set(table)):
        problems.append(f"docs/operators.md: the table of flags has a row for --{name}, which the option table lacks")

    print(f"flags: {len(table)} options in tools/watch/options.cpp's flags(), and {', '.join('--' + e for e in sorted(extra))} "
          f"of its sub-commands and switches; {len(project)} flags of this repository's other programs")
    print(f"flags: read {len(pages)} pages and {len(others)} other files: {counts['agent']} flags on forewarn-watch's command "
          f"lines, {counts['bare']} with no program named, {counts['other']} of other commands (skipped)")
    print(f"flags: docs/operators.md's table of flags has {len(rows)} rows' names")
    for p in problems:
        print(p)
    print("flags: " + ("ok" if not problems else f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")))
    return not problems


# ------------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------------

METRIC_SOURCES = ("tools/watch/metrics.cpp", "tools/watch/kubernetes/node_actions.cpp")
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count"), "counter": (), "gauge": ()}


def build_names(root):
    """forewarn_* names of the build and packaging scripts (CMake functions and targets, shell
    functions): not metrics."""
    out = set()
    paths = list(root.glob("cmake/*.cmake")) + repo_files(root, "CMakeLists.txt")
    paths += list(root.glob("packaging/**/*.sh")) + list(root.glob("tests/**/*.sh")) + [root / "quickstart", root / ".ci/run"]
    for p in paths:
        if p.is_file():
            out |= set(re.findall(r"\b(forewarn_[A-Za-z0-9_]+)", read(p)))
    return out


def metric_pages(root):
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    pages += [p for p in sorted((root / "examples").rglob("*")) if p.is_file()]
    return pages


def kubernetes_code(root):
    k = root / "tools/watch/kubernetes"
    texts = {p.name: read(p) for p in sorted(k.glob("*.[ch]pp"))}
    names = set()
    for t in texts.values():
        for m in re.finditer(r'"((?:forewarn|node\.kubernetes\.io)/[a-z0-9.-]+)"', t):
            names.add(m.group(1))
    conditions, events, reasons = set(), set(), set()
    for t in texts.values():
        conditions |= set(re.findall(r'set_condition\(\{"(\w+)"', t))
        reasons |= set(re.findall(r'set_condition\(\{\w+, "\w+", "(\w+)"', t))
        reasons |= set(re.findall(r'set_condition\(\{"\w+", "\w+", "(\w+)"', t))
        events |= set(re.findall(r'post_event\(\{"(\w+)"', t))
    actions = texts.get("node_actions.cpp", "")
    m = re.search(r"std::string condition_reason\([^)]*\) \{(.*?)\n\}", actions, re.S)
    if m:
        reasons |= set(re.findall(r'return "(\w+)";', m.group(1)))
    return names, conditions, events, reasons, bool(m)


def span_texts(page):
    return [(s, page.prose[s:e].strip()) for s, e in page.spans]


def names(source):
    root = pathlib.Path(source)
    problems = []
    # metrics
    families = {}
    for f in METRIC_SOURCES:
        for m in re.finditer(r"# TYPE (forewarn_\w+) (\w+)", read(root / f)):
            families[m.group(1)] = m.group(2)
    written = set()
    for fam, kind in families.items():
        written.add(fam)
        written |= {fam + s for s in SUFFIXES.get(kind, ())}
    not_metrics = build_names(root)
    mentioned = {}
    skipped = set()
    for p in metric_pages(root):
        text = read(p)
        for m in re.finditer(r"(?<![\w./-])(forewarn_[A-Za-z0-9_]+)", text):
            name, after = m.group(1), text[m.end():m.end() + 2]
            if name.endswith("_") or re.match(r"\.[A-Za-z]|\(", after) or name in not_metrics:
                skipped.add(name)
                continue
            line = text.count("\n", 0, m.start()) + 1
            mentioned.setdefault(name, []).append(f"{rel(root, p)}:{line}")
    for name, wheres in sorted(mentioned.items()):
        if name not in written:
            problems.append(f"{wheres[0]}: the metric {name} is not one forewarn-watch writes"
                            + (f" (and {len(wheres) - 1} more places)" if len(wheres) > 1 else ""))
    ops = read(root / "docs/operators.md")
    ops_tokens = set(re.findall(r"\bforewarn_\w+", ops))
    for fam, kind in sorted(families.items()):
        if not ({fam} | {fam + s for s in SUFFIXES.get(kind, ())}) & ops_tokens:
            problems.append(f"docs/operators.md: the metric {fam} ({kind}, written by the agent) is not mentioned")
    print(f"names: {len(families)} metric families in {', '.join(METRIC_SOURCES)}; {len(mentioned)} metric names mentioned "
          f"in README.md, docs/, examples/ ({len(skipped)} other forewarn_* names skipped: build names, files, prefixes)")

    # Kubernetes
    kube_names, conditions, events, reasons, found_reason_fn = kubernetes_code(root)
    if not found_reason_fn:
        problems.append("tools/watch/kubernetes/node_actions.cpp: condition_reason() not found; this script needs updating")
    for what, got in (("taint/label/annotation names", kube_names), ("conditions", conditions), ("Event reasons", events)):
        if not got:
            problems.append(f"tools/watch/kubernetes/: no {what} found; this script needs updating")
    owned = conditions | events | reasons
    kube_doc = Page(root / "docs/kubernetes.md", read(root / "docs/kubernetes.md"))
    doc_spans = [t for _, t in span_texts(kube_doc)]
    for name in sorted(kube_names | conditions | events):
        if not any(t == name or re.match(re.escape(name) + r"(?![\w/.-])", t) for t in doc_spans):
            kind = ("condition" if name in conditions else "Event reason" if name in events else "name")
            problems.append(f"docs/kubernetes.md: the {kind} {name} (tools/watch/kubernetes/) is not named (in `code`)")
    n_mentions = 0
    for p in metric_pages(root) + [root / "packaging/container/Containerfile"]:
        text = read(p)
        for m in re.finditer(r"(?<![\w/.-])(forewarn/[a-z][a-z0-9-]*)(?![\w/-]|\.[A-Za-z])", text):
            n_mentions += 1
            if m.group(1) not in kube_names:
                problems.append(f"{rel(root, p)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)} is not a taint, label "
                                "or annotation of tools/watch/kubernetes/")
        if p.suffix != ".md":
            continue
        page = Page(p, text)
        for s, t in span_texts(page):
            if re.fullmatch(r"(?:Maintenance|Drain)[A-Za-z]*", t):
                n_mentions += 1
                if t not in owned:
                    problems.append(f"{rel(root, p)}:{page.line(s)}: `{t}` is not a condition, Event reason or condition "
                                    "reason of tools/watch/kubernetes/")
        if p.name != "kubernetes.md":
            continue  # elsewhere a reason is the library's (a recover's), not a condition's
        for m in re.finditer(r"\breasons?\s+((?:`\w+`(?:,\s*|\s+or\s+|\s+and\s+)?)+)", page.prose):
            for r in re.finditer(r"`(\w+)`", m.group(1)):
                n_mentions += 1
                if r.group(1) not in reasons and r.group(1) not in events:
                    problems.append(f"{rel(root, p)}:{page.line(m.start() + r.start())}: the reason `{r.group(1)}` is not one "
                                    "tools/watch/kubernetes/ writes")
    print(f"names: Kubernetes: {len(kube_names)} taint/label/annotation names, {len(conditions)} conditions, {len(events)} "
          f"Event reasons, {len(reasons)} condition reasons in tools/watch/kubernetes/; {n_mentions} mentions read in the pages")
    for p in problems:
        print(p)
    print("names: " + ("ok" if not problems else f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")))
    return not problems


# ------------------------------------------------------------------------------------------------
# links
# ------------------------------------------------------------------------------------------------

# Links out of the repository that a page must make. None: a page names an outside source as text
# (in `code` or in words), so that the pages work offline and a moved site breaks nothing.
OUTSIDE_LINKS = {}


def link_targets(page):
    """(offset, destination) of each link and image of the page's prose, outside code."""
    masked = page.masked()
    out = []
    taken = set()
    for m in re.finditer(r"\]\(", masked):
        # the link text's '[' must be open before it, within the paragraph
        depth, k = 0, m.start() - 1
        opened = False
        while k >= 0 and not masked.startswith("\n\n", k):
            c = masked[k]
            if c == "]":
                depth += 1
            elif c == "[":
                if depth == 0:
                    opened = True
                    break
                depth -= 1
            k -= 1
        if not opened:
            continue
        i = m.end()
        while i < len(masked) and masked[i] in " \t\n":
            i += 1
        if i < len(masked) and masked[i] == "<":
            e = masked.find(">", i)
            dest = masked[i + 1:e] if e > 0 else ""
        else:
            depth, e = 0, i
            while e < len(masked) and not masked[e].isspace():
                if masked[e] == "(":
                    depth += 1
                elif masked[e] == ")":
                    if depth == 0:
                        break
                    depth -= 1
                e += 1
            dest = masked[i:e]
        out.append((i, dest))
        taken.add(i)
    for m in re.finditer(r"^ {0,3}\[[^\]]+\]:[ \t]*<?(\S+?)>?(?:[ \t].*)?$", masked, re.M):
        out.append((m.start(1), m.group(1)))
        taken.add(m.start(1))
    for m in re.finditer(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^\s>]+)>", masked):
        out.append((m.start(1), m.group(1)))
        taken.add(m.start(1))
    for m in re.finditer(r"(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", masked):
        out.append((m.start(1), m.group(1)))
        taken.add(m.start(1))
    for m in re.finditer(r"(?<![\w/<(\"'])(?:https?://|www\.)[^\s<>)\]]+", masked):
        if m.start() not in taken:
            out.append((m.start(), m.group(0)))  # GitHub links a bare address too
    return out


def links(source):
    root = pathlib.Path(source).resolve()
    files = markdown_files(root)
    pages = {p.resolve(): Page(p, read(p)) for p in files}
    anchor_cache = {}

    def anchors_of(p):
        if p not in anchor_cache:
            anchor_cache[p] = anchors(pages[p] if p in pages else Page(p, read(p)))
        return anchor_cache[p]

    problems = []
    n = 0
    for p, page in pages.items():
        for off, dest in link_targets(page):
            n += 1
            where = f"{rel(root, p)}:{page.line(off)}"
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", dest) or dest.startswith(("//", "www.")):
                if dest not in OUTSIDE_LINKS:
                    problems.append(f"{where}: {dest} leaves the repository (name it as text, or add it to OUTSIDE_LINKS with why)")
                continue
            if not dest:
                problems.append(f"{where}: an empty link")
                continue
            path_part, _, anchor = dest.partition("#")
            path_part = urllib.parse.unquote(path_part.split("?")[0])
            if path_part:
                target = (root / path_part.lstrip("/")) if path_part.startswith("/") else (p.parent / path_part)
                target = target.resolve()
                try:
                    inside = target.relative_to(root).parts
                except ValueError:
                    problems.append(f"{where}: {dest} leaves the repository")
                    continue
                if inside[:1] in (("build",), (".git",)):
                    problems.append(f"{where}: {dest} points into {inside[0]}/, which a clone does not have")
                    continue
                if not target.exists():
                    problems.append(f"{where}: {dest}: no such file")
                    continue
            else:
                target = p
            if anchor:
                if target.is_file() and target.suffix == ".md":
                    if urllib.parse.unquote(anchor) not in anchors_of(target):
                        problems.append(f"{where}: {dest}: no heading of {rel(root, target)} has the anchor #{anchor}")
                elif not re.fullmatch(r"L\d+(?:-L\d+)?", anchor):
                    problems.append(f"{where}: {dest}: an anchor into a file that is not a page")
    print(f"links: {len(files)} pages, {n} links and images outside code")
    for q in problems:
        print(q)
    print("links: " + ("ok" if not problems else f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")))
    return not problems


# ------------------------------------------------------------------------------------------------
# check_steps
# ------------------------------------------------------------------------------------------------

# rep.add() calls whose step is not a literal: where its names come from (each found below).
STEP_VARIABLES = {
    "name": 'storm(rep, "STEP", ...) in check.cpp',
    "n": 'for (const char* n : {"STEP", ...}) in check.cpp',
    "why.step": "source::cannot_approve(): check_row literals",
}
# Whole rows handed over (check_row.hpp), their step names read where they are made.
ROW_ARGUMENTS = {
    "l": "source::lever_steps(): clients.cpp's check_row literals",
    "std::move(f)": "kubernetes::check_access(): access.cpp's check_row literals",
}


def code_steps(root):
    steps = {}
    problems = []
    w = root / "tools/watch"
    for f in ("check.cpp", "main.cpp"):
        t = read(w / f)
        for m in re.finditer(r"\brep\.add\(\s*([^,()]+)\);", t):
            if m.group(1).strip() not in ROW_ARGUMENTS:
                problems.append(f"tools/watch/{f}:{t.count(chr(10), 0, m.start()) + 1}: rep.add({m.group(1)}): a row this "
                                "script cannot read (add its source to ROW_ARGUMENTS)")
        for m in re.finditer(r"\brep\.add\(\s*([^,;]+),", t):
            arg = m.group(1).strip()
            line = t.count("\n", 0, m.start()) + 1
            if arg.startswith('"'):
                steps.setdefault(arg.strip('"'), f"tools/watch/{f}:{line}")
            elif arg not in STEP_VARIABLES:
                problems.append(f"tools/watch/{f}:{line}: rep.add({arg}, ...): a step name this script cannot read "
                                "(add its source to STEP_VARIABLES)")
        for m in re.finditer(r'\bstorm\(rep, "([^"]+)"', t):
            steps.setdefault(m.group(1), f"tools/watch/{f}:{t.count(chr(10), 0, m.start()) + 1}")
        for m in re.finditer(r"for \(const char\* (\w+) : \{([^}]*)\}\) rep\.add\(\1\b", t):
            for s in re.findall(r'"([^"]+)"', m.group(2)):
                steps.setdefault(s, f"tools/watch/{f}:{t.count(chr(10), 0, m.start()) + 1}")
    for p in sorted(w.glob("*.[ch]pp")):
        t = read(p)
        for m in re.finditer(r"\{\"([^\"]+)\",\s*check_result::\w+\b", t):
            steps.setdefault(m.group(1), f"{rel(root, p)}:{t.count(chr(10), 0, m.start()) + 1}")
    acc = w / "kubernetes/access.cpp"
    if acc.exists():
        t = read(acc)
        for m in re.finditer(r"(?:push_back\(|check_row \w+)\{\s*\"([^\"]+)\",\s*check_result::\w+\b", t):
            steps.setdefault(m.group(1), f"{rel(root, acc)}:{t.count(chr(10), 0, m.start()) + 1}")
    return steps, problems


def check_steps(source):
    root = pathlib.Path(source)
    steps, problems = code_steps(root)
    lines = read(root / "docs/operators.md").splitlines()
    rows = {}
    head = next((i for i, l in enumerate(lines) if l.startswith("| step | what it looks at |")), None)
    if head is None:
        problems.append('docs/operators.md: no table of check steps ("| step | what it looks at |")')
    else:
        for i in range(head + 2, len(lines)):
            if not lines[i].startswith("|"):
                break
            for s in re.findall(r"`([^`]+)`", lines[i].split("|")[1]):
                rows[s] = i + 1
    for s, where in sorted(steps.items()):
        if s not in rows:
            problems.append(f"{where}: the step \"{s}\" that check can print has no row in docs/operators.md's table of steps")
    for s, line in sorted(rows.items()):
        if s not in steps:
            problems.append(f"docs/operators.md:{line}: the step \"{s}\" is not one check prints")
    print(f"check_steps: {len(steps)} steps in the code ({', '.join(sorted(steps))}); {len(rows)} in docs/operators.md's table")
    for p in problems:
        print(p)
    print("check_steps: " + ("ok" if not problems else f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")))
    return not problems


# ------------------------------------------------------------------------------------------------
# clouds_table
# ------------------------------------------------------------------------------------------------


def client_header(root, cloud):
    """The cloud's client: the header of include/forewarn/<cloud>/ whose class derives from
    forewarn::detail's bases."""
    for p in sorted((root / "include/forewarn" / cloud).glob("*.hpp")):
        if re.search(r"class basic_\w+\s*:\s*public forewarn::detail::\w+<", read(p)):
            return p
    return None


def can_approve_body(root, header):
    """can_approve()'s body, from the client or the detail base it derives from."""
    seen = set()
    p = header
    while p and p not in seen:
        seen.add(p)
        t = read(p)
        m = re.search(r"bool can_approve\(\) const noexcept \{\s*(.*?)\s*\}", t, re.S)
        if m:
            return m.group(1), p
        b = re.search(r"public (?:forewarn::detail::)?(\w+)<", t)
        p = root / "include/forewarn/detail" / f"{b.group(1)}.hpp" if b else None
        if p and not p.exists():
            p = None
    return None, None


def member_default(root, cloud, member):
    """(type, default) of the client_options member, read from the cloud's folder (or detail/)."""
    for p in sorted((root / "include/forewarn" / cloud).glob("*.hpp")) + sorted((root / "include/forewarn/detail").glob("*.hpp")):
        m = re.search(r"^\s*(bool|std::string)\s+" + re.escape(member) + r"\s*(?:=\s*([^;]*?)|\{([^}]*)\})?\s*;", read(p), re.M)
        if m:
            return m.group(1), (m.group(2) if m.group(2) is not None else m.group(3)), p
    return None, None, None


def approval_of(root, cloud):
    """('always' | 'never' | 'by default' | 'only when set', why) for the cloud's client, from
    its can_approve() and its options' defaults."""
    header = client_header(root, cloud)
    if not header:
        return None, f"include/forewarn/{cloud}/: no client header found"
    body, where = can_approve_body(root, header)
    if body is None:
        return None, f"{rel(root, header)}: can_approve() not found"
    w = rel(root, where)
    if re.fullmatch(r"return true;", body):
        return "always", f"{w}: {body}"
    if re.fullmatch(r"return false;", body):
        return "never", f"{w}: {body}"
    m = re.fullmatch(r"return (!?)(?:this->)?options_\.(\w+)(\.empty\(\))?;", body)
    if not m:
        return None, f"{w}: can_approve() is {body!r}, which this script cannot read (update approval_of)"
    neg, member, empty = m.group(1) == "!", m.group(2), m.group(3) is not None
    kind, default, opt = member_default(root, cloud, member)
    if kind is None:
        return None, f"{w}: options_.{member}: its declaration not found"
    if kind == "bool" and not empty:
        value = (default or "false").strip() == "true"
    elif kind == "std::string" and empty:
        value = (default or "").strip() in ("", '""', "{}")
    else:
        return None, f"{rel(root, opt)}: {kind} {member} = {default}: this script cannot read it (update approval_of)"
    value = value != neg
    return ("by default" if value else "only when set"), f"{w}: {body} with {rel(root, opt)}: {kind} {member}" + (
        f" = {default}" if default else " (empty)")


def clouds_table(source):
    root = pathlib.Path(source)
    lines = read(root / "README.md").splitlines()
    problems = []
    head = next((i for i, l in enumerate(lines) if l.startswith("| cloud |") and "approv" in l), None)
    if head is None:
        print("clouds_table: README.md has no table whose header starts with \"| cloud |\" and has a column on approving")
        return False
    cells = [c.strip() for c in lines[head].strip().strip("|").split("|")]
    col = next(i for i, c in enumerate(cells) if "approv" in c)
    clouds = sorted(p.parent.name for p in (root / "include/forewarn").glob("*/*.hpp") if client_header(root, p.parent.name) == p)
    rows = {}
    for i in range(head + 2, len(lines)):
        if not lines[i].startswith("|"):
            break
        row = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        m = re.search(r"docs/(\w+)\.md", row[0])
        if m:
            rows[m.group(1)] = (i + 1, row[col] if col < len(row) else "")
    print(f"clouds_table: README.md:{head + 1}: column \"{cells[col]}\"; clients in include/forewarn/: {', '.join(clouds)}")
    for cloud in clouds:
        want, why = approval_of(root, cloud)
        if want is None:
            problems.append(why)
            continue
        if cloud not in rows:
            problems.append(f"README.md:{head + 1}: the clouds table has no row for {cloud} (its first cell links docs/{cloud}.md)")
            continue
        line, cell = rows[cloud]
        said = cell.lower()
        yes, no = said.startswith("yes"), said.startswith("no")
        fits = {
            "always": yes and "default" not in said and "unless" not in said,
            "by default": yes and "default" in said,
            "only when set": no and "unless" in said,
            "never": no and "unless" not in said and "default" not in said,
        }[want]
        print(f"clouds_table: {cloud}: the code says {want} ({why}); README.md:{line} says \"{cell}\"")
        if not fits:
            expect = {"always": "\"yes\" (with no condition)", "by default": "\"yes, by default\"",
                      "only when set": "\"no, unless ...\"", "never": "\"no\""}[want]
            problems.append(f"README.md:{line}: {cloud}: \"{cell}\" disagrees with the code ({want}: {why}); it should start {expect}")
    for cloud in sorted(set(rows) - set(clouds)):
        problems.append(f"README.md:{rows[cloud][0]}: a row for {cloud}, which has no client in include/forewarn/")
    for p in problems:
        print(p)
    print("clouds_table: " + ("ok" if not problems else f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")))
    return not problems


if __name__ == "__main__":
    commands = {"flags": flags, "names": names, "links": links, "check_steps": check_steps, "clouds_table": clouds_table}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(0 if commands[sys.argv[1]](sys.argv[2]) else 1)
