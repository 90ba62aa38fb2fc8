#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every repository file path that README.md and docs/*.md name exists.

A path is an inline code span or a link target that contains a slash or ends in a
file extension, e.g. `lib/kernels/dl/arq.h`, `dl/arq.h` (under lib/kernels/),
`qa_node.py` (anywhere), `sim/fading_errors` (.h, .cc or .py), in a table's "file" column also a bare
`cas` (cas.h or cas.cc anywhere) or a block's GRC id, [notes](slep.md)
(beside the page), `bindings/{a,b}.cc`. Templates naming NAME are not checked.
Not checked: URLs, absolute paths (system files), `build/...` (made by the build),
`../shared/...` and `shared/...` (the project's shared directory beside the
checkout), and names under a home or temporary directory.

  check_doc_paths.py [REPO]       exit 1 listing page:line: path for each missing one
"""

import glob
import os
import re
import sys

EXTENSIONS = (".cc", ".h", ".py", ".md", ".grc", ".yml", ".yaml", ".sh", ".lua", ".json",
              ".cmake", ".in", ".txt")
# Where a relative name may live, tried in order.
SEARCH_DIRS = ("", "lib/kernels", "lib", "include", "python/hfstack", "python/hfstack/bindings",
               "include/gnuradio/hfstack", "tests", "apps", "bench", "fuzz", "grc",
               "examples", "docs")
SKIP_PREFIXES = ("build/", "build-fuzz/", "../shared/", "shared/", "~/", "/", "http:",
                 "https:", "ipc:", "tcp:", "$")
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATHLIKE = re.compile(r"^[\w.\-/{},*+]+$")


def expand_braces(path):
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    out = []
    for choice in match.group(1).split(","):
        out += expand_braces(path[:match.start()] + choice + path[match.end():])
    return out


def candidates(text):
    """The path-like tokens of one line of Markdown."""
    for token in CODE.findall(text) + LINK.findall(text):
        token = token.split("#")[0].rstrip(".,:;")
        token = re.sub(r":\d+(-\d+)?$", "", token)  # file.cc:120
        if token.rstrip("/") in ("../shared", "shared"):  # the shared directory itself
            continue
        if not token or token.startswith(SKIP_PREFIXES) or not PATHLIKE.match(token):
            continue
        if "NAME" in token:  # a template: `lib/NAME_impl.cc`
            continue
        if "/" in token or token.endswith(EXTENSIONS):
            # A dotted Python name or a version is not a file: `hfstack.dl`, `3.10`.
            if "/" not in token and not re.search(r"[A-Za-z_\-]\.[a-z]+$", token):
                continue
            yield token


def table_names(line, file_columns):
    """Code spans in the `file` column(s) of a Markdown table row: names of files
    (`cas`, `arq`: cas.h / cas.cc under lib/kernels/dl) even without a slash."""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    for column in file_columns:
        # A cell that starts with a name lists files (`cas`, `arq`); a cell that starts
        # with words describes something and quotes other names (options, keys).
        if column is not None and column < len(cells) and cells[column].startswith("`"):
            # Parentheses qualify a name: `apps/hfstack-modem` (`tx`, `rx`).
            for token in CODE.findall(re.sub(r"\([^()]*\)", "", cells[column])):
                if PATHLIKE.match(token) and not token.startswith(SKIP_PREFIXES):
                    yield token


def exists(repo, page_dir, path):
    for base in (page_dir,) + SEARCH_DIRS:
        for one in expand_braces(path):
            full = os.path.join(repo, base, one)
            if glob.glob(full) if "*" in one else os.path.exists(full):
                return True
    # A file named without its extension: `sim/fading_errors`, `cas`.: `sim/fading_errors`.
    if not os.path.splitext(path)[1] and not path.endswith("/"):
        if any(exists(repo, page_dir, path + ext) for ext in (".h", ".cc", ".py")):
            return True
    # A block by its GRC id: `hf_channel_cc` (grc/hfstack_hf_channel_cc.block.yml).
    if os.path.exists(os.path.join(repo, "grc", f"hfstack_{path}.block.yml")):
        return True
    # A bare file name anywhere in the tree (tables that name files by area).
    if "/" not in path:
        for one in expand_braces(path):
            if glob.glob(os.path.join(repo, "**", one), recursive=True):
                return True
    return False


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    pages = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    missing = []
    checked = 0
    for page in pages:
        page_dir = os.path.relpath(os.path.dirname(page), repo)
        in_fence = False
        file_columns = []
        with open(page, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    in_fence = not in_fence
                    continue
                if in_fence:
                    continue
                names = set(candidates(line))
                if not line.startswith("|"):
                    file_columns = []
                elif not file_columns and re.match(r"^\|[\s|:-]+\|\s*$", line) is None:
                    header = [cell.strip().lower() for cell in line.strip().strip("|").split("|")]
                    file_columns = [i for i, cell in enumerate(header) if cell in ("file", "files")]
                    if not file_columns:
                        file_columns = [None]  # a table without such a column
                else:
                    names.update(table_names(line, file_columns))
                for path in sorted(names):
                    checked += 1
                    if not exists(repo, page_dir, path):
                        missing.append(f"{os.path.relpath(page, repo)}:{number}: {path}")
    for entry in missing:
        print("missing:", entry)
    print(f"{checked} paths named in {len(pages)} pages, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
