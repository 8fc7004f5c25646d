#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The house rules a reader cannot see broken at a glance, checked on every run.

  check.py timeouts BUILD_DIR [CTEST]   every ctest test of that build has a TIMEOUT (a hang fails in
                                minutes, not at ctest's 1,500 s)
  check.py agent SOURCE_DIR     forewarn-watch (tools/watch) and forewarn-emulator (tools/emulator)
                                use the public API only: no forewarn::detail, no <forewarn/detail/...>
  check.py names SOURCE_DIR     no Catch test case's name holds ';' (ctest's discovery splits it into
                                two tests that each run nothing)
  check.py top SOURCE_DIR       the top of include/forewarn holds what a program includes: the
                                headers listed below (and their -inl.hpp), nothing else
  check.py forwarding SOURCE_DIR  no header under include/forewarn only forwards to another (one
                                #include and no code): a header that moves is moved, its old path
                                gone (the library has had no release that a forwarder would serve)
  check.py clouds SOURCE_DIR    each cloud is named only where it must be (CLOUD_PLACES below,
                                docs/architecture.md "A new cloud"), at most that many files outside
                                its own folder name it, and it is mentioned at all (comments
                                included, its product's other names too) only there and in
                                MENTION_PLACES
  check.py cold SOURCE_DIR      no function of the poll path (POLL_PATH below) is marked FOREWARN_COLD
                                (config.hpp: compiled for size, its calls taken as unlikely) at its
                                definition or a declaration, each one is still found where the list
                                says, and no header spells the attribute but config.hpp
  check.py repeats SOURCE_DIR    no two clouds' client headers (include/forewarn/<cloud>/) share a run
                                of six lines, comments, blank lines and lone braces aside: what two
                                clouds do alike belongs once, in detail/
  check.py unity SOURCE_DIR     every test file of a unity test program (tests/unit, tests/integration, tests/watch,
                                tests/kubernetes, tests/windows: test_*.cpp, regressions.cpp) keeps its
                                names in a namespace of its own name, opened after its includes and
                                closed at its end, so that files never clash in a batch
                                (cmake/forewarnUnityTests.cmake)
  check.py bodies SOURCE_DIR    no header of the agent (tools/watch) defines a function whose body spans
                                lines (one-line accessors and templates aside): a header declares, its
                                room's .cpp defines
"""
import json
import pathlib
import re
import subprocess
import sys

# What a program includes, at the top of include/forewarn (docs/architecture.md, "Headers").
TOP = {
    "forewarn.hpp", "fwd.hpp", "config.hpp", "event.hpp", "result.hpp", "time.hpp", "clock.hpp",
    "log.hpp", "json.hpp", "diff.hpp", "detect.hpp", "poller.hpp", "readiness.hpp",
    "state_file.hpp", "transport.hpp", "fleet.hpp", "client_options.hpp", "clouds.hpp", "cloud_facts.hpp",
}

# The clouds, and the files outside a cloud's own folder (include/forewarn/<cloud>/) that may name
# it (docs/architecture.md, "A new cloud"). A file names a cloud when, outside its comments, it
# holds the enumerator `cloud::<cloud>`, the namespace `<cloud>::`, a header path
# `forewarn/<cloud>/` or the whole string literal "<cloud>". Not counted: tests/, docs/,
# examples/ (programs written against the library, as a user writes them), *.md, the cloud's own
# folder, and the build trees.
CLOUDS = ("azure", "gce", "aws", "alibaba", "tencent")
CLOUD_PLACES = (
    "include/forewarn/event.hpp",                     # enum class cloud, to_string
    "include/forewarn/clouds.hpp",                    # the list of the clouds' facts
    "include/forewarn/forewarn.hpp",                  # the umbrella header
    "src/forewarn.cpp",                               # the compiled library's instantiations
    "include/forewarn/detail/extern_templates.hpp",   # ... and their extern declarations
    "include/forewarn/testing/emulator/",             # the emulator's services, its scenario file
    "tools/emulator/",                                # ... and its program
    "include/forewarn/testing/harness.hpp",           # the public harness: one simulated client per cloud
    "include/forewarn/testing/fake_source.hpp",       # its default origin (Azure only)
    "tools/watch/clients.cpp",                        # the one file of the agent that names the clients
)
# Files outside the cloud's folder that name it today, each one of CLOUD_PLACES: the fixed bar.
# AWS has 10: its emulator plays two services, IMDS (aws_imds.hpp) and Auto Scaling's API
# (aws_autoscaling.hpp), which its lifecycle hook approves through.
CLOUD_ALLOWANCE = {"azure": 10, "gce": 9, "aws": 10, "alibaba": 9, "tencent": 9}
SCANNED = ("include", "src", "tools", "cmake", "packaging", "CMakeLists.txt")
# Mentions, comments included: a cloud's name as a word in any case (a part of a name between
# underscores too), or another name of its product or its services (Google, EC2, Auto Scaling,
# ECS, CVM, ...), in a file outside its folder, docs aside. A shared part
# speaks of the shape ("a hanging GET", "a service with session tokens") and the cloud's own
# header says which cloud has it. The files that may mention a cloud: CLOUD_PLACES, and these.
CLOUD_WORDS = {
    "azure": ("azure", "microsoft"),
    "gce": ("gce", "google", "googleapis", "compute engine"),
    "aws": ("aws", "amazon", "amazonaws", "ec2", "imdsv2", "auto scaling", "autoscaling"),
    "alibaba": ("alibaba", "aliyun", "ecs"),
    "tencent": ("tencent", "tencentyun", "cvm"),
}
MENTION_PLACES = (
    "include/forewarn/detect.hpp",                    # detect_options' and detection's members (public API)
    "include/forewarn/fwd.hpp",                       # the clients' forward declarations
    "include/forewarn/transport/retry.hpp",           # retry_rules: the services' retry rules (public API)
    "include/forewarn/transport/retry-inl.hpp",       # ... and what each retries
    "include/forewarn/testing/scenario.hpp",          # the emulator's scenario: each service's controls
    "CMakeLists.txt",                                 # the project's description
    "cmake/forewarnPackage.cmake",                    # the packages' descriptions
    "packaging/container/Containerfile",              # the image's description
    "packaging/windows/README.txt",                   # the Windows zip's README
    "include/forewarn/time.hpp",                      # parse_aws_time, format_aws_time: that cloud's time form
    "include/forewarn/time-inl.hpp",                  # ... and its definition
    "tools/watch/cloud_flags.cpp",                    # the agent's flags for a cloud's own API
    "tools/watch/options.hpp",                        # ... and the settings they set (aws_*, gce_*)
)

# The poll path: what every poll runs (the client's round, the exchange, the transport, the parse)
# and what grows with the events of a document (their parse, the diff, the change tracker), by the
# file that defines each function and the start of its definition. FOREWARN_COLD (config.hpp) is for
# code whose speed does not matter; on these it would slow every poll, or the 1,000-event parse and
# diff (docs/benchmarks.md, "Cold code").
POLL_PATH = (
    ("include/forewarn/transport/curl-inl.hpp", "result<http_response> curl_transport::send("),
    ("include/forewarn/transport/curl-inl.hpp", "result<http_response> curl_transport::state::send("),
    ("include/forewarn/transport/curl-inl.hpp", "CURLcode curl_transport::state::configure("),
    ("include/forewarn/transport/curl-inl.hpp", "size_t curl_exchange::on_header("),
    ("include/forewarn/transport/curl-inl.hpp", "size_t curl_exchange::on_body("),
    ("include/forewarn/transport/curl-inl.hpp", "int curl_exchange::on_progress("),
    ("include/forewarn/transport/retry-inl.hpp", "bool rate_limiter::acquire("),
    ("include/forewarn/detail/json-inl.hpp", "result<rapidjson::Document> parse_json("),
    ("include/forewarn/detail/metadata_exchange.hpp", "result<http_response> send_once("),
    ("include/forewarn/detail/metadata_exchange-inl.hpp", "result<document> key_rounds::round("),
    ("include/forewarn/detail/client_base.hpp", "result<document> client_base<Client, Transport, Identity, Cloud, Options>::next("),
    ("include/forewarn/detail/client_base.hpp", "result<document> client_base<Client, Transport, Identity, Cloud, Options>::fetch("),
    ("include/forewarn/detail/client_base.hpp", "result<bool> client_base<Client, Transport, Identity, Cloud, Options>::ask("),
    ("include/forewarn/detail/client_base.hpp", "result<document> client_base<Client, Transport, Identity, Cloud, Options>::compose("),
    ("include/forewarn/azure/parse-inl.hpp", "result<document> parse_document("),
    ("include/forewarn/azure/parse-inl.hpp", "result<event> azure_parse_event("),
    ("include/forewarn/aws/parse-inl.hpp", "result<std::vector<event>> aws_parse_key("),
    ("include/forewarn/aws/parse-inl.hpp", "result<std::vector<event>> parse_scheduled_events("),
    ("include/forewarn/gce/upcoming_maintenance-inl.hpp", "result<std::optional<upcoming_maintenance>> parse_upcoming_maintenance("),
    ("include/forewarn/time-inl.hpp", "result<std::chrono::system_clock::time_point> parse_iso8601("),
    ("include/forewarn/time-inl.hpp", "result<std::chrono::system_clock::time_point> parse_rfc1123("),
    ("include/forewarn/time-inl.hpp", "result<std::optional<std::chrono::system_clock::time_point>> parse_time("),
    ("include/forewarn/time-inl.hpp", "result<std::optional<std::chrono::system_clock::time_point>> parse_aws_time("),
    ("include/forewarn/poller.hpp", "result<std::size_t> basic_poller<Source>::poll_once("),
    ("include/forewarn/detail/poller/ledger-inl.hpp", "std::vector<change> poller_ledger::track("),
    ("include/forewarn/poller/change_tracker-inl.hpp", "std::vector<change> change_tracker::track("),
    ("include/forewarn/diff-inl.hpp", "std::vector<change> diff("),
)


def timeouts(build, ctest="ctest"):
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True, capture_output=True, text=True)
    tests = json.loads(out.stdout)["tests"]
    missing = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "TIMEOUT" not in props or not float(props["TIMEOUT"]) > 0:
            missing.append(t["name"])
    for name in missing:
        print(f"no TIMEOUT: {name}")
    print(f"{len(tests) - len(missing)} of {len(tests)} tests have a TIMEOUT")
    return not missing and len(tests) > 0


def agent(source):
    bad = []
    files = sorted(p for tool in ("watch", "emulator") for p in (pathlib.Path(source) / "tools" / tool).rglob("*")
                   if p.suffix in (".hpp", ".cpp"))
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"forewarn::detail\b|<forewarn/detail/", line):
                bad.append(f"{path.relative_to(source)}:{n}: {line.strip()}")
    for b in bad:
        print(b)
    print(f"{len(files)} files of tools/watch and tools/emulator read, {len(bad)} use forewarn's detail")
    return not bad and len(files) > 0


def names(source):
    bad = []
    files = sorted((pathlib.Path(source) / "tests").rglob("*.cpp"))
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
            name = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
            if ";" in name:
                bad.append(f"{path.relative_to(source)}: {name}")
    for b in bad:
        print(f"';' in a test name: {b}")
    print(f"{len(files)} test files read, {len(bad)} names with ';'")
    return not bad and len(files) > 0


def top(source):
    root = pathlib.Path(source) / "include" / "forewarn"
    bad = []
    seen = 0
    for path in sorted(root.glob("*.hpp")):
        seen += 1
        name = path.name
        if name in TOP or name.replace("-inl.hpp", ".hpp") in TOP:
            continue
        bad.append(name)
    for b in bad:
        print(f"include/forewarn/{b}: not what a program includes (TOP): a part belongs in a folder")
    print(f"{seen} files at the top of include/forewarn, {len(bad)} out of place")
    return not bad and seen > 0


def forwarding(source):
    root = pathlib.Path(source) / "include" / "forewarn"
    bad = []
    seen = 0
    for path in sorted(root.rglob("*.hpp")):
        seen += 1
        text = path.read_text(encoding="utf-8")
        includes = re.findall(r"^\s*#\s*include\b", text, re.M)
        code = [l for l in without_comments(text).splitlines() if l.strip() and not l.strip().startswith("#")]
        if len(includes) == 1 and not code:
            bad.append(path.relative_to(root.parent.parent))
    for b in bad:
        print(f"{b}: only forwards to another header (one #include, no code): include the other one")
    print(f"{seen} headers under include/forewarn, {len(bad)} forwarding")
    return not bad and seen > 0


def without_comments(text):
    """C++ text without its comments (their line breaks kept, so line numbers hold); string and
    character literals kept."""
    pattern = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)
    return pattern.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " " + "\n" * m.group(0).count("\n"), text)


def in_places(rel, places):
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


def clouds(source):
    root = pathlib.Path(source)
    files = []
    for top_name in SCANNED:
        p = root / top_name
        files.extend([p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file()))
    # Each file read once: its whole text (mentions) and its code without comments (names); docs aside.
    texts = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel.endswith(".md"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts[rel] = (text, without_comments(text) if path.suffix in (".hpp", ".cpp", ".h", ".in") else text)
    ok = True
    for c in CLOUDS:
        own = f"include/forewarn/{c}/"
        naming = re.compile(rf'\bcloud::{c}\b|\b{c}::|forewarn/{c}/|"{c}"')
        # Comments included; a word inside a name too (parse_aws_time, AWS_EC2_METADATA_DISABLED).
        word = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(CLOUD_WORDS[c]) + r")(?![A-Za-z0-9])", re.I)
        found = [rel for rel, (_, code) in texts.items() if not rel.startswith(own) and naming.search(code)]
        mentions = [rel for rel, (whole, _) in texts.items() if not rel.startswith(own) and word.search(whole)]
        outside = [f for f in found if not in_places(f, CLOUD_PLACES)]
        for f in outside:
            print(f"{f}: names {c} (cloud::{c}, {c}::, forewarn/{c}/ or \"{c}\") outside the places that must")
        over = len(found) > CLOUD_ALLOWANCE[c]
        if over:
            print(f"{c}: {len(found)} files name it, above its allowance of {CLOUD_ALLOWANCE[c]}: " + ", ".join(found))
        print(f"{c}: named in {len(found)} files outside {own} (allowance {CLOUD_ALLOWANCE[c]}), {len(outside)} out of place")
        strays = [f for f in mentions if not in_places(f, CLOUD_PLACES + MENTION_PLACES)]
        for f in strays:
            line = next(n for n, text in enumerate(texts[f][0].splitlines(), 1) if word.search(text))
            print(f"{f}:{line}: mentions {c} ({'/'.join(CLOUD_WORDS[c])}), comments included, outside the places "
                  "that may: say the shape, and let the cloud's own header say which cloud has it")
        print(f"{c}: mentioned in {len(mentions)} files outside {own}, comments included, {len(strays)} out of place")
        ok = ok and not outside and not over and not strays
    return ok and len(files) > 0


def repeats(source):
    root = pathlib.Path(source) / "include" / "forewarn"
    window = 6
    thin = {"{", "}", "};", "});", ")", "public:", "private:", "protected:"}
    runs = {}  # six lines, as written but for their indentation -> where they stand
    seen = 0
    for c in CLOUDS:
        for path in sorted((root / c).rglob("*.hpp")):
            seen += 1
            lines = [(t.strip(), n) for n, t in enumerate(without_comments(path.read_text(encoding="utf-8")).splitlines(), 1)]
            lines = [(t, n) for t, n in lines if t and t not in thin and not t.startswith("#")]
            for i in range(len(lines) - window + 1):
                key = tuple(t for t, _ in lines[i:i + window])
                runs.setdefault(key, []).append((c, path.relative_to(root.parent.parent).as_posix(), lines[i][1]))
    pairs = {}
    for key, where in runs.items():
        for a in where:
            for b in where:
                if a[0] < b[0]:
                    pairs.setdefault((a[1], b[1]), (a[2], b[2]))
    for (a, b), (la, lb) in sorted(pairs.items()):
        print(f"{a}:{la} ~ {b}:{lb}: six lines the same in two clouds' headers: write them once, in detail/")
    print(f"{seen} client headers of {len(CLOUDS)} clouds read, {len(pairs)} pairs sharing six lines")
    return not pairs and seen > 0


def cold(source):
    """Nothing on POLL_PATH is marked cold, at its definition or at any declaration of its name; the
    attribute is spelled only through FOREWARN_COLD (config.hpp), so that this is the one thing to look
    for."""
    root = pathlib.Path(source)
    ok = True
    headers = sorted((root / "include" / "forewarn").rglob("*.hpp"))
    texts = {h: without_comments(h.read_text(encoding="utf-8")) for h in headers}
    raw = re.compile(r"__attribute__\s*\(\(\s*cold|\[\[\s*gnu::cold")
    for h, text in texts.items():
        if h.name != "config.hpp" and raw.search(text):
            print(f"{h.relative_to(root).as_posix()}: spells the cold attribute itself; use FOREWARN_COLD")
            ok = False
    reported = set()
    for rel, start in POLL_PATH:
        lines = texts[root / rel].splitlines()
        if not any(start in l for l in lines):
            print(f"{rel}: no definition starting '{start}' (moved or renamed? update POLL_PATH)")
            ok = False
            continue
        # The function's own name (after the last "::"): no declaration of that name, in any
        # header, may carry FOREWARN_COLD (the text since the previous ';', '{' or '}').
        name = start.rstrip("(").split("::")[-1].split(" ")[-1]
        for h, text in texts.items():
            for m in re.finditer(r"[^;{}]*\b" + re.escape(name) + r"\s*\(", text):
                if "FOREWARN_COLD" in m.group(0) and (h, m.end()) not in reported:
                    reported.add((h, m.end()))
                    line = text.count("\n", 0, m.end()) + 1
                    print(f"{h.relative_to(root).as_posix()}:{line}: '{name}' is on the poll path ({rel}) but is marked FOREWARN_COLD")
                    ok = False
    print(f"{len(POLL_PATH)} functions of the poll path checked in {len(headers)} headers")
    return ok

def unity(source):
    """Each test file of a unity program: `namespace <stem> {` after its last #include, nothing but
    comments and preprocessor lines before it, and `}  // namespace <stem>` as its last line of code
    (or just before a closing #endif)."""
    root = pathlib.Path(source)
    files = sorted(p for d in ("unit", "integration", "kubernetes", "watch", "windows") for p in (root / "tests" / d).glob("*.cpp")
                   if p.name.startswith("test_") or p.name == "regressions.cpp")
    ok = True
    for f in files:
        rel = f.relative_to(root).as_posix()
        lines = without_comments(f.read_text(encoding="utf-8")).splitlines()
        code = [(i, l.strip()) for i, l in enumerate(lines) if l.strip()]
        opening = "namespace %s {" % f.stem
        first = next(((i, l) for i, l in code if not l.startswith("#")), None)
        if first is None or first[1] != opening:
            print(f"{rel}: its first line of code is not '{opening}' (the file's names, in a namespace of its own)")
            ok = False
            continue
        if any(l.startswith("#include") for i, l in code if i > first[0]):
            print(f"{rel}: an #include after '{opening}' would put that header in the namespace")
            ok = False
        tail = [l for i, l in code if not l.startswith("#")]
        if not tail or tail[-1] != "}":
            print(f"{rel}: its last line of code does not close the namespace {f.stem}")
            ok = False
    print(f"{len(files)} test files checked")
    return ok


def bodies(source):
    """No header of the agent (tools/watch) defines a function whose body spans lines: a header
    declares, its room's .cpp defines. One-line bodies (accessors, forwarders) and templates (their
    bodies must be seen where they are used) are allowed."""
    root = pathlib.Path(source) / "tools" / "watch"
    headers = sorted(root.rglob("*.hpp"))
    bad = []
    for h in headers:
        rel = h.relative_to(root.parent.parent).as_posix()
        text = without_comments(h.read_text(encoding="utf-8"))
        # Strings blanked (a brace inside one is not code), preprocessor lines dropped.
        text = re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', lambda m: '""', text)
        text = "\n".join("" if l.lstrip().startswith("#") else l for l in text.split("\n"))
        for line, head in multiline_bodies(text):
            bad.append(f"{rel}:{line}: a function body over more than one line ({head}): define it in the room's .cpp")
    for b in bad:
        print(b)
    print(f"{len(headers)} headers under tools/watch, {len(bad)} function bodies in them over more than one line")
    return not bad and len(headers) > 0


def multiline_bodies(text):
    """(line, head) of each function body in `text` that spans lines, outside templates; the scopes of
    namespaces, classes, structs and unions are looked into, every other brace block skipped."""
    found = []

    def match(i):  # the index just past the brace that closes the one at i
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    return j + 1
        return len(text)

    def scan(start, end):
        head_start = start
        i = start
        while i < end:
            c = text[i]
            if c in ";}":
                head_start = i + 1
            elif c == ":" and text[i - 1] not in ":" and text[i + 1] != ":" and re.search(
                    r"\b(public|private|protected)\s*$", text[head_start:i]):
                head_start = i + 1
            elif c == "{":
                head = " ".join(text[head_start:i].split())
                close = match(i)
                if re.match(r"template\b", head):
                    pass  # a template's bodies stay in the header
                elif re.match(r"(inline\s+)?namespace\b|extern\b", head) or (
                        re.search(r"\b(class|struct|union)\b", head) and "(" not in head.split("class")[0].split("struct")[0]):
                    if not re.search(r"\benum\b", head):
                        scan(i + 1, close - 1)
                elif "(" in head and not re.search(r"=\s*$", head) and "\n" in text[i:close]:
                    found.append((text.count("\n", 0, i) + 1, head[-60:]))
                i = close
                head_start = i
                continue
            i += 1

    scan(0, len(text))
    return found


if __name__ == "__main__":
    commands = {"timeouts": timeouts, "agent": agent, "names": names, "top": top, "clouds": clouds, "cold": cold,
                "unity": unity, "forwarding": forwarding, "bodies": bodies, "repeats": repeats}
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    ok = commands[sys.argv[1]](*sys.argv[2:])
    sys.exit(0 if ok else 1)
