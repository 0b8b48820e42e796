"""Docs that run: every command block of README.md and docs/*.md that is meant to run is run,
and the figures the page quotes beneath it are checked against what it printed.

The convention (docs/README.md):
  ```sh     a block of commands that runs (bash, `set -e`, from a scratch folder where build/,
            configs/, traces/, tests/, scripts/ and docs/ are the repository's)
  ```text   directly after a ```sh block: what it prints. Every number in it must appear, in
            the same order, among the numbers of the real output ("..." lines may abridge it)
  <!-- norun: REASON -->        before a ```sh block: shown, not run (REASON says why)
  <!-- run-with: OLD => NEW --> before a ```sh block: run with OLD replaced by NEW (a smaller
                                input); the ```text beneath is then not checked
  <!-- exit: N -->             before a ```sh block: its last command exits N (an error example)
  <!-- file: NAME -->          before any block: its text is written to NAME in the scratch
                                folder before the page's commands run (a workload the page shows)
Blocks of a page share one scratch folder and run in page order (a `compile` then a `run` of
its trace). A plain ``` block that starts with a systolic command fails the test: a command
shown (on any line of a plain block) is either run (```sh) or says why not (norun)."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import BUILD, REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINKED = ("configs", "traces", "tests", "scripts", "docs")
MARKER = re.compile(r"<!--\s*(norun|run-with|exit|file):?\s*(.*?)\s*-->")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
COMMAND = re.compile(r"^\$?\s*(\./build/systolic\s|systolic\s+(run|compile|pack|sweep|viz|config)\b|\.?/?scripts/"
                     r"|cmake\s|/usr/bin/python3\s|python3\s|PYTHONPATH=|echo\s)")


class Block:
    def __init__(self, page, line, lang, text, markers):
        self.page, self.line, self.lang, self.text, self.markers = page, line, lang, text, markers
        self.output = None  # the ```text block right after a ```sh block

    def where(self):
        return f"{self.page.relative_to(REPO)}:{self.line}"


FENCE = re.compile(r"^( {0,3})```\s*(\w*)")


def blocks(page):
    """The fenced blocks of a page (also those indented in a list item) with the markers on
    the lines just above each."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent = len(fence.group(1))
        markers, j = [], i - 1
        while j >= 0 and MARKER.search(lines[j]):
            markers.extend(MARKER.findall(lines[j]))
            j -= 1
        end = next(k for k in range(i + 1, len(lines)) if FENCE.match(lines[k]))
        text = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        block = Block(page, i + 1, fence.group(2), text, markers)
        if block.lang == "text" and found and found[-1].lang == "sh" and \
                not "".join(lines[found[-1].line_end + 1:i]).strip():
            found[-1].output = block
        block.line_end = end
        found.append(block)
        i = end + 1
    return found


def marker(block, name):
    return [value for key, value in block.markers if key == name]


def numbers(text):
    return NUMBER.findall(text)


def quoted_in_order(expected, actual):
    """The numbers of `expected` that are not found, in order, in `actual` (empty: all found).
    A missing number does not consume the rest: the next one is looked for where it left off."""
    got, at, missing = numbers(actual), 0, []
    for n in numbers(expected):
        if n in got[at:]:
            at = got.index(n, at) + 1
        else:
            missing.append(n)
    return missing


def scratch(tmp_path):
    for name in LINKED:
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "build").symlink_to(BUILD)
    return tmp_path


def run_block(block, cwd):
    script = block.text
    for sub in marker(block, "run-with"):
        old, new = (s.strip() for s in sub.split("=>"))
        assert old in script, f"{block.where()}: run-with: '{old}' is not in the block"
        script = script.replace(old, new)
    want = int((marker(block, "exit") or ["0"])[0])
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE", COLUMNS="200")
    env["PATH"] = f"/usr/bin:{env.get('PATH', '')}"  # python3 in a page is Debian's
    proc = subprocess.run(["bash", "-c", ("set -e\n" if want == 0 else "") + script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == want, f"{block.where()}: exit {proc.returncode}, expected {want}:\n{out[-3000:]}"
    return out


def runnable_pages():
    return [p for p in PAGES if any(b.lang == "sh" for b in blocks(p))]


def test_every_command_block_is_run_or_says_why_not():
    unmarked = [b.where() for p in PAGES for b in blocks(p)
                if b.lang == "" and any(COMMAND.match(line) for line in b.text.splitlines())]
    assert not unmarked, ("command blocks neither ```sh (run by this test) nor <!-- norun: why -->:\n"
                          + "\n".join(unmarked))


def test_norun_says_why():
    silent = [b.where() for p in PAGES for b in blocks(p) if "" in marker(b, "norun")]
    assert not silent, "norun without a reason: " + ", ".join(silent)


def test_number_check_catches_a_stale_figure():
    """The check itself: a changed or reordered figure is found, an abridged output passes."""
    actual = "layer a 120 cycles 0.5 util\nlayer b 240 cycles 0.25 util\ntotal 360\n"
    assert quoted_in_order("a 120 0.5\n...\ntotal 360", actual) == []
    assert quoted_in_order("a 121 0.5", actual) == ["121"]
    assert quoted_in_order("total 360\na 120", actual) == ["120"]


@pytest.mark.parametrize("page", runnable_pages(), ids=lambda p: p.name)
def test_page_runs(page, tmp_path, systolic_bin):
    cwd = scratch(tmp_path)
    page_blocks = blocks(page)
    for block in page_blocks:
        for name in marker(block, "file"):
            (cwd / name).write_text(block.text)
    for block in page_blocks:
        if block.lang != "sh" or marker(block, "norun"):
            continue
        out = run_block(block, cwd)
        if block.output is not None and not marker(block, "run-with"):
            missing = quoted_in_order(block.output.text, out)
            assert not missing, (f"{block.where()}: figures the page quotes at line {block.output.line} "
                                 f"that the command no longer prints (in order): {missing[:10]}\n"
                                 f"--- it printed:\n{out[-3000:]}")
