"""The scenario reader on hostile input: one ``FILE:LINE: what`` line, on the right line, exit 2, no
traceback, in bounded time and memory.

``tests/hostile/`` holds the corpus: each ``NAME.L<line>.yaml`` is a malformed scenario whose one
problem must be reported on ``<line>``. What a repository cannot hold (a pipe, a device, a symlink loop,
a file too big, a folder named like a scenario) is made here, in a temporary folder.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cards_simulator.scenario import yamlnodes
from agent_cards_simulator.scenario.files import known_clauses, read_checked
from agent_cards_simulator.scenario.reader import ScenarioError, read

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "hostile"
FILES = sorted(CORPUS.glob("*.yaml"))
EXPECTED_LINE = re.compile(r"\.L(\d+)\.yaml$")
MEMORY_LIMIT = 1 << 30  # bytes of address space for the whole corpus run


def expected_line(path: Path) -> int:
    found = EXPECTED_LINE.search(path.name)
    assert found, f"{path.name}: a corpus file is named NAME.L<line>.yaml"
    return int(found.group(1))


def problems(path: Path) -> list[str]:
    try:
        read_checked(path)
    except ScenarioError as error:
        return error.lines()
    return []


def test_the_corpus_has_at_least_100_files() -> None:
    assert len(FILES) >= 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_hostile_file_is_one_line_on_the_right_line(path: Path) -> None:
    started = time.perf_counter()
    lines = problems(path)
    assert time.perf_counter() - started < 2.0
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}:{expected_line(path)}: "), lines[0][:300]
    assert "\n" not in lines[0] and "\x00" not in lines[0]


def _limit_memory() -> None:  # in the child, before it runs: the reader must stay well inside this
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def agent_cards(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_cards.cli", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False,
        timeout=timeout, preexec_fn=_limit_memory,
    )


def test_the_whole_corpus_through_the_command_exits_2_without_a_traceback() -> None:
    done = agent_cards("replay", CORPUS.relative_to(ROOT))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == ""  # no file of the corpus is replayed
    lines = done.stderr.splitlines()
    for line in lines:
        assert re.match(r"^.+\.yaml:\d+: \S", line), line[:300]
    for path in FILES:
        mine = [line for line in lines if line.startswith(f"{path.relative_to(ROOT)}:")]
        assert len(mine) == 1, (path.name, mine)
        assert mine[0].startswith(f"{path.relative_to(ROOT)}:{expected_line(path)}: ")


# -- what a repository cannot hold -------------------------------------------------------------------


def _one_problem(path: Path, contains: str) -> None:
    lines = problems(path)
    assert len(lines) == 1 and lines[0].startswith(f"{path}:1: ") and contains in lines[0], lines


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    done = agent_cards("replay", fifo, timeout=30)  # a blocking open would hang here until the timeout
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"{fifo}:1: cannot read the file: it is not a regular file (a pipe, a device or a socket)"
    )


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    _one_problem(link, "not a regular file")


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to("loop.yaml")
    _one_problem(loop, "cannot read the file")
    assert known_clauses(loop) == {}  # resolving it would raise: the folders above it are read as written


def test_a_folder_with_a_symlink_loop_inside(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "back").symlink_to("..")
    (tmp_path / "self.yaml").symlink_to("self.yaml")
    (tmp_path / "ok.yaml").write_text("title: t\nclauses: [TAKE-TYPE]\nsteps: [wait: 1]\n", encoding="utf-8")
    done = agent_cards("replay", tmp_path, timeout=30)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"{tmp_path / 'self.yaml'}:1: cannot read the file: Too many levels of "
                                        "symbolic links"]
    assert "[passed]" in done.stdout


def test_a_folder_named_like_a_scenario(tmp_path: Path) -> None:
    folder = tmp_path / "s.yaml"
    folder.mkdir()
    _one_problem(folder, "it is a folder")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(yamlnodes.MAX_FILE_BYTES + 1)  # sparse: nothing is written
    _one_problem(big, "over the limit")


def test_an_alias_bomb_in_the_clause_list_is_one_line(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (tmp_path / "clauses.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("title: t\nclauses: [TAKE-TYPE]\nsteps: []\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ScenarioError) as raised:
        read_checked(scenario)
    assert time.perf_counter() - started < 2.0
    assert raised.value.lines() == [f"{tmp_path / 'clauses.yaml'}:6: the clause list cannot be read: more than "
                                    f"{yamlnodes.MAX_VALUES} values once aliases are expanded (an alias bomb?)"]


def test_aliases_are_shared_not_copied() -> None:
    text = "title: t\nclauses: [TAKE-TYPE]\nbase: &b {description: d, prompt: p}\nsteps: [{call: *b}, {call: *b}]\n"
    data = yamlnodes.load(text)
    assert data["steps"][0]["call"] is data["steps"][1]["call"]
    assert data["steps"][0]["call"].line == 3


def test_an_unclosed_bracket_is_reported_where_it_opened_not_past_the_end() -> None:
    for text, line in (("a: [\n\n\n", 1), ('a: 1\nb: "x\n\n', 2)):
        with pytest.raises(yamlnodes.YamlError) as raised:
            yamlnodes.load(text)
        assert raised.value.line == line


def test_a_valid_scenario_still_reads_the_same() -> None:
    text = ("title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - call: {description: d, prompt: !repeat {text: é, times: 3, "
            "then: x}}\n  - wait: 86400000\n")
    scenario = read("s.yaml", text)
    assert len(scenario.steps) == 2
