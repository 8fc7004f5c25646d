#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cuts every ```cpp block out of docs/*.md into C++ the build compiles (tests/docs/CMakeLists.txt).

Each block is announced on the line before it by how it compiles:

    <!-- compiled: MODE -->                 or   <!-- compiled: MODE; PRE | PRE ... -->

MODE is `program` (a whole program with main(): its own executable), `file` (namespace-scope
code), `body` (statements: the body of a function) or `members` (declarations: the body of a
struct), optionally followed by `on windows`: such a block is compiled only by the Windows build
(tests/windows/CMakeLists.txt), every other block only by the Linux build (tests/docs/). PRE items are lines of C++ put before the block at namespace scope (an #include, the
declaration of a name the text leaves to the reader). A block without the comment, or with
another MODE, stops the configure: every block is compiled, or the docs go stale.

usage: snippets.py DOCS_DIR OUT_DIR [windows|posix]   prints one line per program ("program NAME"),
       then "combined"; the platform defaults to posix
"""
import pathlib
import re
import sys

BLOCK = re.compile(r"^```cpp\n(.*?)^```", re.S | re.M)
NOTE = re.compile(r"<!--\s*compiled:\s*(program|file|body|members)(?:\s+on\s+(windows|posix))?\s*(?:;(.*?))?-->")


def split_includes(code):
    includes, rest = [], []
    for line in code.splitlines():
        (includes if line.startswith("#include") else rest).append(line)
    return includes, "\n".join(rest)


def write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main():
    docs, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    platform = sys.argv[3] if len(sys.argv) > 3 else "posix"
    out.mkdir(parents=True, exist_ok=True)
    includes, parts, problems = [], [], []
    for md in sorted(docs.glob("*.md")):
        text = md.read_text()
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[: m.start()].rstrip("\n").splitlines()
            note = NOTE.search(before[-1]) if before else None
            where = f"{md.name}:{line}"
            if not note:
                problems.append(f"{where}: a ```cpp block without '<!-- compiled: MODE -->' on the line before it")
                continue
            if (note.group(2) or "posix") != platform:
                continue  # the other platform's build compiles it
            mode, pre = note.group(1), [p.strip() for p in (note.group(3) or "").split("|") if p.strip()]
            ident = re.sub(r"[^a-z0-9]", "_", f"{md.stem}_{line}")
            origin = f"// {where}\n"
            if mode == "program":
                write_if_changed(out / f"{ident}.cpp", f"// Generated from docs/{where}: edit it there.\n"
                                 + "\n".join(pre) + "\n" + m.group(1))
                print(f"program {ident}")
                continue
            inc, code = split_includes(m.group(1))
            includes += [i for i in inc + [p for p in pre if p.startswith("#include")] if i not in includes]
            pre_code = "\n".join(p for p in pre if not p.startswith("#include"))
            if mode == "file":
                body = code
            elif mode == "body":
                body = f"[[maybe_unused]] void snippet() {{\n{code}\n}}"
            else:
                body = f"struct snippet {{\n{code}\n}};"
            parts.append(f"{origin}namespace doc_{ident} {{\n{pre_code}\n{body}\n}}  // namespace doc_{ident}\n")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    write_if_changed(out / "combined.cpp", "// Generated from docs/*.md: edit the docs.\n" + "\n".join(includes)
                     + "\n\n" + "\n".join(parts))
    print("combined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
