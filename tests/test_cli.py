"""The ``agent-cards`` command, run as a real subprocess: ``replay`` and ``coverage``, exit codes and output."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cards_simulator.scenario.reader import read

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
CLAUSE_COUNT = 60  # PERM-PLAN is the 60th
PROBLEM_LINE = re.compile(r"^(?P<file>.+\.yaml):(?P<line>\d+): (?P<message>.+)$")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def agent_cards(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_cards.cli", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", check=False, timeout=300,
    )


def json_lines(stdout: str) -> list[dict[str, Any]]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]


def scenario_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.yaml") if p.name != "clauses.yaml")


@pytest.fixture(scope="module")
def replayed() -> subprocess.CompletedProcess[str]:
    return agent_cards("replay", "--json", "scenarios")


@pytest.fixture(scope="module")
def coverage() -> dict[str, Any]:
    done = agent_cards("coverage", "--json", "scenarios")
    assert done.returncode == 0, done.stdout + done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# --- replay ---------------------------------------------------------------------------------------------------


def test_replay_json_over_the_scenarios(replayed: subprocess.CompletedProcess[str]) -> None:
    assert replayed.returncode == 0, replayed.stderr
    assert "Traceback" not in replayed.stderr
    results = json_lines(replayed.stdout)
    assert len(results) == len(scenario_files(SCENARIOS)) > 0
    assert len(replayed.stdout.strip().splitlines()) == len(results)  # one object per line
    assert sorted(r["file"] for r in results) == sorted(str(p.relative_to(ROOT)) for p in scenario_files(SCENARIOS))
    for result in results:
        assert {"file", "title", "passed", "events"} <= set(result)
        assert result["passed"] is True, (result["file"], result.get("failures"))
        assert isinstance(result["title"], str) and result["title"]
        assert result["events"] or result.get("variants"), result["file"]  # a file with variants: each its own
        for events in [result["events"]] + [v["events"] for v in result.get("variants", [])]:
            for event in events:
                assert type(event["t"]) is int and event["t"] >= 0
                assert isinstance(event["kind"], str) and event["kind"]
            times = [e["t"] for e in events]
            assert times == sorted(times), result["file"]  # the timeline only moves forward


MALFORMED = {
    "bad-yaml.yaml": 'title: "never closed\nclauses: [LANG]\nsteps: []\n',
    "unknown-key.yaml": (
        "title: An unknown key\nclauses: [LANG]\nsteps:\n  - call: {description: D, prompt: P}\n"
        "expct:\n  - answer: {call: toolu_0001}\n"
    ),
    "wrong-type.yaml": (
        "title: A wrong type\nclauses: [LANG]\nsession:\n  interactive: \"yes\"\nsteps:\n  - wait: soon\n"
    ),
    "missing-field.yaml": "title: No steps\nclauses: [LANG]\n",
    "unknown-clause.yaml": (
        "title: An unknown clause\nclauses: [LANG, NO-SUCH-CLAUSE]\nsteps:\n  - call: {description: D, prompt: P}\n"
    ),
    "not-a-mapping.yaml": "- just\n- a list\n",
    "typos.yaml": (
        "title: Typos\nclauses: [LANG]\nsteps:\n  - call: {description: D, prompt: P}\n  - wiat: 100\n"
        "  - workflow: {description: W, promt: P}\nexpect:\n  - notes: {}\n"
    ),
}
EXPECTED_LINES = {
    "unknown-key.yaml": [(5, "unknown key 'expct'")],
    "wrong-type.yaml": [(4, "session.interactive"), (6, "steps[0].wait")],
    "missing-field.yaml": [(1, "'steps' is missing")],
    "unknown-clause.yaml": [(2, "no clause 'NO-SUCH-CLAUSE'")],
    "typos.yaml": [
        (5, "steps[1]: unknown step 'wiat' (did you mean 'wait'?)"),
        (6, "steps[2].workflow: unknown key 'promt' (did you mean 'prompt'?)"),
        (8, "expect[0]: no event kind 'notes' (did you mean 'note'?)"),
    ],
}


@pytest.fixture
def clauses_folder(tmp_path: Path) -> Path:
    """A scratch scenarios folder with the real clause list (so clause ids are checked)."""
    shutil.copy(SCENARIOS / "clauses.yaml", tmp_path / "clauses.yaml")
    return tmp_path


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_scenario_exits_2_with_file_line_messages(clauses_folder: Path, name: str) -> None:
    path = clauses_folder / name
    path.write_text(MALFORMED[name], encoding="utf-8")
    done = agent_cards("replay", path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.splitlines()
    assert lines
    for line in lines:
        match = PROBLEM_LINE.match(line)
        assert match, line
        assert match["file"] == str(path)
    found = [(int(m["line"]), m["message"]) for m in map(PROBLEM_LINE.match, lines) if m]
    for line_no, fragment in EXPECTED_LINES.get(name, []):
        assert any(n == line_no and fragment in message for n, message in found), found
    assert done.stdout.strip() == ""  # nothing replayed


def test_malformed_scenarios_in_one_folder_are_all_reported(clauses_folder: Path) -> None:
    for name, text in MALFORMED.items():
        (clauses_folder / name).write_text(text, encoding="utf-8")
    (clauses_folder / "fine.yaml").write_text(
        "title: Fine\nclauses: [DELIV-PENDING]\nsteps:\n  - call: {description: D, prompt: P}\n", encoding="utf-8"
    )
    done = agent_cards("replay", "--json", clauses_folder)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    reported = {Path(m["file"]).name for m in map(PROBLEM_LINE.match, done.stderr.splitlines()) if m}
    assert reported == set(MALFORMED)
    assert [r["file"] for r in json_lines(done.stdout)] == [str(clauses_folder / "fine.yaml")]  # the rest still runs


def test_a_missing_path_exits_2(tmp_path: Path) -> None:
    done = agent_cards("replay", tmp_path / "nowhere.yaml")
    assert done.returncode == 2
    assert done.stderr.startswith(f"{tmp_path / 'nowhere.yaml'}:1: ")


def test_a_failed_expectation_exits_1(clauses_folder: Path) -> None:
    path = clauses_folder / "fails.yaml"
    path.write_text(
        "title: Expects the wrong arm\nclauses: [DELIV-PENDING]\nsteps:\n  - call: {description: D, prompt: P}\n"
        "expect:\n  - answer: {call: toolu_0001, result: {status: completed}}\n",
        encoding="utf-8",
    )
    done = agent_cards("replay", "--json", path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (result,) = json_lines(done.stdout)
    assert result["passed"] is False
    assert any(failure.startswith(f"{path}:6: expected") for failure in result["failures"])
    text = agent_cards("replay", path)
    assert text.returncode == 1 and "FAILED" in text.stdout


def test_the_same_scenario_with_the_right_expectation_passes(clauses_folder: Path) -> None:
    path = clauses_folder / "passes.yaml"
    path.write_text(
        "title: Expects the right arm\nclauses: [DELIV-PENDING]\nsteps:\n  - call: {description: D, prompt: P}\n"
        "expect:\n  - answer: {call: toolu_0001, result: {status: async_launched}}\n",
        encoding="utf-8",
    )
    done = agent_cards("replay", "--json", path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json_lines(done.stdout)[0]["passed"] is True


# --- the prompt language ------------------------------------------------------------------------------------------


def contexts(result: dict[str, Any]) -> list[str]:
    return [line for e in result["events"] if e["kind"] == "answer" for line in e.get("context", [])]


def test_replay_of_the_japanese_scenario() -> None:
    done = agent_cards("replay", "--json", SCENARIOS / "lang" / "ja.yaml")
    assert done.returncode == 0, done.stderr
    (result,) = json_lines(done.stdout)
    (context,) = contexts(result)
    assert JAPANESE.search(context)
    assert "send_to_session" in context and "[lich]" in context


def test_session_lang_sets_the_prompt_language(clauses_folder: Path) -> None:
    body = "clauses: [LANG]\nsteps:\n  - call: {description: D, prompt: P}\n"
    (clauses_folder / "ja.yaml").write_text(f"title: Japanese\nsession:\n  lang: ja\n{body}", encoding="utf-8")
    (clauses_folder / "en.yaml").write_text(f"title: Unset\n{body}", encoding="utf-8")
    done = agent_cards("replay", "--json", clauses_folder)
    assert done.returncode == 0, done.stderr
    by_title = {r["title"]: contexts(r) for r in json_lines(done.stdout)}
    (japanese,), (english,) = by_title["Japanese"], by_title["Unset"]
    assert JAPANESE.search(japanese) and not JAPANESE.search(english)
    for literal in ("send_to_session", "[lich]"):
        assert literal in japanese and literal in english


def test_replay_lang_overrides_every_scenario_and_ignores_the_callers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LICH_PROMPT_LANG", "ru")  # the caller's own, as lich exports it: never read
    plain = agent_cards("replay", "--json", SCENARIOS / "deliver" / "pending-shared.yaml")
    assert plain.returncode == 0, plain.stderr
    (english,) = contexts(json_lines(plain.stdout)[0])
    assert "took this task" in english
    done = agent_cards("replay", "--json", "--lang", "ja", SCENARIOS / "deliver" / "pending-shared.yaml")
    assert done.returncode == 0, done.stderr
    (context,) = contexts(json_lines(done.stdout)[0])
    assert JAPANESE.search(context) and "send_to_session" in context and "[lich]" in context
    missing = agent_cards("replay", "--lang")
    assert missing.returncode == 2 and missing.stderr == (
        "agent-cards replay: argument --lang: expected one argument (agent-cards replay --help)\n")


# --- coverage -------------------------------------------------------------------------------------------------------


def test_coverage_json_shows_every_clause(coverage: dict[str, Any]) -> None:
    assert coverage["covered"] == coverage["clauses"] == CLAUSE_COUNT
    assert coverage["uncovered"] == [] and coverage["unknown"] == [] and coverage["invalid"] == []
    assert len(coverage["shown_by"]) == CLAUSE_COUNT
    assert all(coverage["shown_by"].values())


def test_coverage_text_exits_0() -> None:
    done = agent_cards("coverage", "scenarios")
    assert done.returncode == 0
    assert f"{CLAUSE_COUNT} of {CLAUSE_COUNT} clauses shown" in done.stdout


def shown_once(coverage: dict[str, Any]) -> tuple[str, Path]:
    """A clause exactly one scenario shows, in a scenario that names other clauses too."""
    for clause, files in sorted(coverage["shown_by"].items()):
        if len(files) == 1 and len(read(ROOT / files[0]).clauses) > 1:
            return clause, Path(files[0])
    raise AssertionError("no clause is shown by exactly one scenario that names several")


def without_clause(text: str, clause: str) -> str:
    """The scenario text with ``clause`` taken out of its clause list (flow or block style)."""
    flow = re.sub(rf"(?m)^(clauses:\s*\[.*?)\b{re.escape(clause)}\b,?\s*(.*\])$",
                  lambda m: (m[1] + m[2]).replace(", ]", "]").replace(",]", "]"), text)
    if flow != text:
        return flow
    return re.sub(rf"(?m)^\s*-\s*{re.escape(clause)}\s*\n", "", text, count=1)


def test_a_clause_no_scenario_shows_fails_coverage(coverage: dict[str, Any], tmp_path: Path) -> None:
    clause, relative = shown_once(coverage)
    copy = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, copy)
    target = copy / relative.relative_to("scenarios")
    before = read(target).clauses
    target.write_text(without_clause(target.read_text(encoding="utf-8"), clause), encoding="utf-8")
    after = read(target).clauses
    assert clause in before and clause not in after and len(after) == len(before) - 1

    done = agent_cards("coverage", "--json", copy)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["uncovered"] == [clause]
    assert data["covered"] == CLAUSE_COUNT - 1
    text = agent_cards("coverage", copy)
    assert text.returncode == 1
    assert clause in text.stdout and "NOT SHOWN" in text.stdout


def test_an_unknown_clause_id_fails_coverage(tmp_path: Path) -> None:
    copy = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, copy)
    target = copy / "extra.yaml"
    target.write_text(
        "title: Names a clause the list lacks\nclauses: [LANG, NOT-A-CLAUSE]\nsteps:\n"
        "  - call: {description: D, prompt: P}\n",
        encoding="utf-8",
    )
    done = agent_cards("coverage", "--json", copy)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["uncovered"] == []
    assert len(data["unknown"]) == 1
    assert "NOT-A-CLAUSE" in data["unknown"][0] and data["unknown"][0].startswith(f"{target}:2: ")
    text = agent_cards("coverage", copy)
    assert text.returncode == 1 and "NOT-A-CLAUSE" in text.stdout


def test_coverage_without_a_clause_list_exits_1(tmp_path: Path) -> None:
    done = agent_cards("coverage", tmp_path)
    assert done.returncode == 1
    assert "clauses.yaml" in done.stderr and "Traceback" not in done.stderr


# --- usage ----------------------------------------------------------------------------------------------------------


def test_help_and_unknown_commands() -> None:
    helped = agent_cards("--help")
    assert helped.returncode == 0 and "agent-cards replay" in helped.stdout
    for args in (("frobnicate",), ()):
        done = agent_cards(*args)
        assert done.returncode == 2 and "usage:" in done.stderr and "Traceback" not in done.stderr
    unknown_option = agent_cards("replay", "--frob", "scenarios")
    assert unknown_option.returncode == 2 and "--frob" in unknown_option.stderr


def test_the_console_script_runs() -> None:
    script = Path(sys.executable).parent / "agent-cards"
    if not script.exists():
        pytest.skip("the agent-cards console script is not installed beside this interpreter")
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0 and "agent-cards coverage" in done.stdout


def test_the_console_script_ends_a_replay_at_once_with_all_it_printed(tmp_path: Path) -> None:
    """replay ends without the interpreter's teardown (it ends fast): every line is still out, the code kept."""
    script = Path(sys.executable).parent / "agent-cards"
    if not script.exists():
        pytest.skip("the agent-cards console script is not installed beside this interpreter")
    failing = tmp_path / "fails.yaml"
    failing.write_text("title: T\nclauses: [FOOTER-COUNT]\nsteps:\n  - footer\nexpect:\n  - footer: {line: x}\n",
                       encoding="utf-8")
    cases = ((["replay", "--json", str(SCENARIOS)], 0), (["replay", str(failing)], 1),
             (["replay", str(tmp_path / "none.yaml")], 2))
    for args, code in cases:
        done = subprocess.run([str(script), *args], capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
    lines = subprocess.run([str(script), "replay", "--json", str(SCENARIOS)], capture_output=True, text=True,
                           check=True, timeout=120).stdout.splitlines()
    assert len(lines) == len(scenario_files(SCENARIOS)) and all(json.loads(line)["passed"] for line in lines)
    # `agent-cards replay scenarios | head -1`: the reader leaves after one line
    writer = subprocess.Popen([str(script), "replay", str(SCENARIOS)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert writer.stdout is not None and writer.stderr is not None
    first = writer.stdout.readline()
    writer.stdout.close()
    errors = writer.stderr.read()
    writer.stderr.close()
    assert writer.wait(timeout=120) == 0 and first.endswith(b"[passed]\n")
    assert errors == b""  # a reader gone: no BrokenPipeError printed


@pytest.mark.parametrize(("args", "torn_down"), [(["replay", "scenarios/reload.yaml"], False),
                                                 (["coverage", "scenarios"], False), (["--version"], True)])
def test_only_commands_marked_ends_at_once_skip_the_teardown(args: list[str], torn_down: bool) -> None:
    code = ("import atexit, sys; atexit.register(lambda: print('TEARDOWN', file=sys.stderr)); "
            f"sys.argv = ['agent-cards', *{args!r}]; from agent_cards.cli import entry; entry()")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("TEARDOWN" in done.stderr) is torn_down


def test_replay_jobs_change_nothing_but_the_time() -> None:
    for form in (("--json",), (), ("--mermaid",)):
        one = agent_cards("replay", *form, "--jobs", "1", SCENARIOS)
        many = agent_cards("replay", *form, "--jobs", "3", SCENARIOS)
        default = agent_cards("replay", *form, SCENARIOS)
        assert one.returncode == many.returncode == default.returncode == 0, many.stderr
        assert one.stdout == many.stdout == default.stdout and many.stderr == ""
    for bad in ("0", "x", "-1"):
        done = agent_cards("replay", "--jobs", bad, SCENARIOS)
        assert done.returncode == 2 and "--jobs" in done.stderr and "Traceback" not in done.stderr
    assert "argument --jobs: expected one argument" in agent_cards("replay", SCENARIOS, "--jobs").stderr


def test_a_broken_clause_list_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "clauses.yaml").write_text("TAKE-TYPE: [unclosed\n", encoding="utf-8")
    (tmp_path / "case.yaml").write_text(
        "title: T\nclauses: [TAKE-TYPE]\nsteps:\n  - call: {description: D, prompt: P}\n", encoding="utf-8"
    )
    for done, code in ((agent_cards("coverage", tmp_path), 1), (agent_cards("replay", tmp_path), 2)):
        assert done.returncode == code
        assert "Traceback" not in done.stderr
        where = re.escape(str(tmp_path / "clauses.yaml"))
        assert re.match(rf"{where}:\d+: the clause list cannot be read", done.stderr)


def test_replay_mermaid_prints_a_fenced_diagram_per_scenario() -> None:
    two = (SCENARIOS / "esc-mid-open.yaml", SCENARIOS / "take" / "old-lich-oversize.yaml")
    done = agent_cards("replay", "--mermaid", *two)
    assert done.returncode == 0, done.stderr
    blocks = re.findall(r"```mermaid\n(.*?)\n```", done.stdout, re.S)
    assert len(blocks) == 3  # one, and one per variant of the other
    assert all(b.startswith("sequenceDiagram\n") for b in blocks)
    assert "Person->>CC: t=1000 Esc" in blocks[0]
    assert agent_cards("replay", "--mermaid", "--json", SCENARIOS / "reload.yaml").returncode == 2


def test_import_writes_a_scenario_that_replays(tmp_path: Path) -> None:
    log = ROOT / "tests" / "fixtures" / "sessions" / "print-agent-taskstop.jsonl"
    out = tmp_path / "imported.yaml"
    done = agent_cards("import", log, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    replayed = agent_cards("replay", out)
    assert replayed.returncode == 0, replayed.stdout
    assert agent_cards("import", "--help").stdout.startswith("usage: agent-cards import [-h]")
    assert agent_cards("import").returncode == 2
