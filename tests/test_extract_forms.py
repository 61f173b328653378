"""The real side's extraction, one form of evidence at a time: the forms the kept real runs do not hold (a
session host the module restarted, a plugin's own Agent call, a held read, a run cut off, a toast cut inside
a path, an Esc at a step's edges), each turned into the events the comparator reads."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cards_conformance.extract import (
    AGENT_HOOK,
    SPAWN_HOOK,
    Evidence,
    Extractor,
    Request,
    RunRecord,
    cut_path,
    kept,
    step_of,
    submitted_texts,
)
from agent_cards_simulator.host import results
from agent_cards_simulator.scenario.reader import read

T0 = 1_000.0  # seconds since the epoch, as a real run's are


def scenario(*prompts: str, env: str = "") -> Any:
    calls = "".join(f"      - call: {{description: d{i}, prompt: {p}}}\n" for i, p in enumerate(prompts))
    return read("s.yaml", f"title: t\nclauses: [TAKE-TYPE]\n{env}steps:\n  - parallel:\n{calls}")


def events(evidence: Evidence, *prompts: str, env: str = "") -> list[dict[str, Any]]:
    return Extractor(scenario(*(prompts or ("p",)), env=env), evidence).events()


def of(kind: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in found if e["kind"] == kind]


def test_each_session_host_s_start_is_read_and_one_the_module_restarted_is_host_start() -> None:
    boots: list[tuple[float, dict[str, Any]]] = [
        (T0, {"events": [{"event": "session.start", "e": {"isInteractive": False}}]}),
        (T0 + 1, {"events": [{"event": "session.start", "e": {}}]}),
        (T0 + 2, {"events": []})]
    found = events(Evidence(t0=T0, boots=boots))
    assert [(e["t"], e["kind"], e.get("interactive")) for e in found] == [
        (0, "session.start", False), (1000, "session.start", True), (2000, "host.start", None)]


@pytest.mark.parametrize(("given", "answer"), [
    ({"error": "boom"}, {"error": "boom"}),
    ({"value": {"deny": "not here"}}, {"deny": "not here"}),
    ({"value": {"text": "done"}}, {"result": "done"}),
    ({"value": {"deny": 5}}, {"result": {"deny": 5}}),
    ({"value": "plain"}, {"result": "plain"}),
])
def test_a_plugin_s_agent_call_is_answered_by_what_it_resolved_to(given: dict[str, Any],
                                                                  answer: dict[str, Any]) -> None:
    found = events(Evidence(t0=T0, plugin_answers={"toolu_0001": (T0 + 0.5, given)}))
    assert of("answer", found) == [{"t": 500, "kind": "answer", "call": "toolu_0001", **answer}]


def test_toasts_are_the_effects_that_are_toasts() -> None:
    bridge = [{"t": T0 + 0.25, "effects": ["toast", {"footer": "x"}, {"toast": "lich failed"}]}]
    assert of("toast", events(Evidence(t0=T0, bridge=bridge))) == [{"t": 250, "kind": "toast", "text": "lich failed"}]


def subagent(at: float, task: str) -> Request:
    return Request(at, {"messages": [{"role": "user", "content": task}]})


def test_a_native_agent_is_its_first_request_and_an_agent_of_no_call_is_none() -> None:
    sent = {1: [{"call": "toolu_0001", "tool": "Agent", "input": {"description": "d0", "prompt": "fix the cache"}}]}
    evidence = Evidence(t0=T0, served={1: T0}, sent=sent, subagent=[
        subagent(T0 + 1, "Please fix the cache now"), subagent(T0 + 2, "Please fix the cache now"),
        subagent(T0 + 3, "something else entirely")])
    native = of("native", events(evidence, "fix the cache"))
    assert [(e["t"], e["call"]) for e in native] == [(1000, "toolu_0001")]


def passed_on(at: float, dispatch: int, hook: int = AGENT_HOOK) -> list[dict[str, Any]]:
    """The bridge's log of a hook dispatch that passed its call on at ``at``."""
    return [{"t": at, "op": "event", "id": dispatch, "hook": hook}, {"t": at, "id": dispatch, "kind": "next"}]


def denied(call_id: str, at: float) -> Request:
    """The model's next request, with the call refused by a typed deny rule."""
    text = "<tool_use_error>Agent type 'x' has been denied by permission rule 'Agent(x)'</tool_use_error>"
    return Request(at, {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "is_error": True, "content": text}]}]})


def checks(evidence: Evidence, *prompts: str) -> list[tuple[int, str, str, str]]:
    return [(e["t"], e["call"], e["outcome"], e["via"]) for e in of("permission", events(evidence, *prompts))]


def test_a_rule_s_refusal_of_a_call_does_not_end_the_turn_for_the_next() -> None:
    bridge = passed_on(T0 + 0.1, 1) + passed_on(T0 + 0.2, 2)
    evidence = Evidence(t0=T0, served={1: T0}, bridge=bridge, main=[denied("toolu_0001", T0 + 1)])
    assert checks(evidence, "a", "b") == [(100, "toolu_0001", "deny", "rule"), (200, "toolu_0002", "allow", "mode")]


def test_a_step_whose_later_call_never_reached_its_check_has_one_check() -> None:
    evidence = Evidence(t0=T0, served={1: T0}, bridge=passed_on(T0 + 0.1, 1))
    assert checks(evidence, "a", "b") == [(100, "toolu_0001", "allow", "mode")]


@pytest.mark.parametrize(("esc", "checked"), [(None, True), (0.0, False), (0.05, False), (0.1, False), (0.2, True)])
def test_a_call_passed_on_at_or_after_its_step_s_esc_is_no_check(esc: float | None, checked: bool) -> None:
    marks = [] if esc is None else [{"at": T0 + esc, "kind": "esc"}]
    marks.append({"at": T0 + 0.3, "kind": "reload"})
    evidence = Evidence(t0=T0, served={1: T0, 2: T0 + 0.15}, bridge=passed_on(T0 + 0.1, 1), marks=marks)
    assert checks(evidence, "a") == ([(100, "toolu_0001", "allow", "mode")] if checked else [])


def test_a_dispatch_id_used_again_after_a_reload_is_its_own_dispatch() -> None:
    """A reloaded module numbers its dispatches from 1 again: its dispatch 1, the twelfth of the log, is not
    the old module's dispatch 11, the second."""
    bridge = [*passed_on(T0 - 5, 0, hook=2), *passed_on(T0 + 0.05, 11)]
    bridge += [line for i in range(2, 11) for line in passed_on(T0 + 0.06 + i / 1000, i, hook=2)]
    bridge += passed_on(T0 + 0.1, 1)
    evidence = Evidence(t0=T0, served={1: T0}, bridge=bridge)
    assert checks(evidence, "a", "b") == [(50, "toolu_0001", "allow", "mode"), (100, "toolu_0002", "allow", "mode")]


def test_a_spawn_is_the_step_s_allowed_call_s() -> None:
    bridge = [*passed_on(T0 + 0.1, 1), {"t": T0 + 0.2, "op": "event", "id": 2, "hook": SPAWN_HOOK},
              {"t": T0 + 0.3, "id": 2, "kind": "done"}]
    found = events(Evidence(t0=T0, served={1: T0}, bridge=bridge), "a")
    assert [(e["t"], e["call"], e["answer"]) for e in of("spawn", found)] == [(300, "toolu_0001", "deny")]


def test_a_run_held_for_an_esc_is_timed_from_its_release_and_a_run_cut_off_says_so() -> None:
    ns = 1_000_000_000
    runs = [RunRecord("lich", int(T0 * ns), ["sessions", "--json"], "[]", "", int((T0 + 2) * ns),
                      (0, int((T0 + 2.1) * ns))),
            RunRecord("git", int((T0 + 1) * ns), ["status"], "out", "err")]
    found = of("run", events(Evidence(t0=T0, runs=runs)))
    assert found == [
        {"t": 0, "kind": "run", "argv": ["/opt/lich/bin/lich", "sessions", "--json"], "held_ms": 2000, "exit": 0,
         "stdout": "[]", "stderr": "", "error": None, "ms": 100},
        {"t": 1000, "kind": "run", "argv": ["git", "status"], "exit": None, "stdout": "out", "stderr": "err",
         "error": "cut off before it exited"}]
    no_bin = of("run", events(Evidence(t0=T0, runs=runs[:1]), env="session:\n  env: {LICH_BIN: null}\n"))
    assert no_bin[0]["argv"][0] == "lich"


REAL, VIRTUAL = "/tmp/run-é/bin/lich", "/opt/lich/bin/lich"


def test_a_real_path_is_read_as_its_virtual_one_wherever_it_stands() -> None:
    ns = 1_000_000_000
    runs = [RunRecord("lich", int(T0 * ns), ["open", "--cwd", "/tmp/p/x"], exit=(0, int(T0 * ns)))]
    bridge = [{"t": T0, "effects": [{"toast": f"lich failed at {REAL[:12]}…"}, {"toast": f"ran {REAL}"}]}]
    found = events(Evidence(t0=T0, runs=runs, bridge=bridge, paths=[(REAL, VIRTUAL), ("/tmp/p", "/home/zoë/p")]))
    assert of("run", found)[0]["argv"] == ["/opt/lich/bin/lich", "open", "--cwd", "/home/zoë/p/x"]
    assert [(e["text"], e.get("cut_path")) for e in of("toast", found)] == [
        (f"lich failed at {VIRTUAL}…", True), (f"ran {VIRTUAL}", None)]


@pytest.mark.parametrize(("toast", "cut"), [
    ("at /tmp/run/bin/lic…", "at /opt/lich/bin/lich…"),  # cut inside the path
    ("at /tmp/run/bin/lich…", None),  # the whole path, the cut after it: not inside
    ("at /tmp/run/bin/li…", "at /opt/lich/bin/lich…"),
    ("at /tmp/ru…", "at /opt/lich/bin/lich…"),  # two slashes: a path's beginning
    ("at /tm…", None),  # one: could be any word
    ("at /opt/lich/bin/lich and mo…", "at /opt/lich/bin/lich and mo…"),  # cut after a path read whole
    ("no path here…", None),
    ("at /tmp/run/bin/lic", None),  # not cut
])
def test_a_toast_cut_inside_a_real_path_reads_that_path_whole(toast: str, cut: str | None) -> None:
    assert cut_path(toast, [("/tmp/run/bin/lich", VIRTUAL)]) == cut


def test_a_call_step_s_window_opens_at_the_moment_it_was_served() -> None:
    assert step_of([(1.0, 1), (2.0, 2)], 2.0) == 2
    assert step_of([(1.0, 1), (2.0, 2)], 0.5) is None


def test_the_texts_a_person_submitted_are_the_text_blocks_of_the_last_user_message() -> None:
    body = {"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                         {"role": "user", "content": ["raw", {"type": "text", "text": " typed "},
                                                      {"type": "text", "text": ""},
                                                      {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                                      {"type": "image"}]}]}
    assert submitted_texts(body) == ["typed"]
    assert submitted_texts({"messages": [{"role": "user", "content": "as text"}]}) == ["as text"]
    assert submitted_texts({"messages": [{"role": "user", "content": None}]}) == []


def test_what_the_model_read_after_a_result_takes_later_plain_messages_too() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_0001", "content": "{}"}
    main = [Request(T0 + 1, {"messages": [{"role": "user", "content": [result]},
                                          {"role": "user", "content": "a hook's line"}]})]
    [answer] = of("answer", events(Evidence(t0=T0, main=main)))
    assert answer["read"] == "{}\na hook's line"


def test_evidence_kept_names_its_run_folder_whatever_characters_it_holds() -> None:
    folder = "/home/ü/runs/7"
    evidence = Evidence(t0=T0, paths=[(folder + "/bin/lich", VIRTUAL)])
    assert kept(evidence, folder)["paths"] == [["<run>/bin/lich", VIRTUAL]]


def test_an_ask_with_nobody_to_answer_it_is_a_dialog_s_no() -> None:
    text = f"<tool_use_error>{results.PERMISSION_DENIED_NOBODY}</tool_use_error>"
    main = [Request(T0 + 1, {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_0001", "is_error": True, "content": text}]}]})]
    evidence = Evidence(t0=T0, served={1: T0}, bridge=passed_on(T0 + 0.1, 1), main=main)
    assert checks(evidence, "a") == [(100, "toolu_0001", "deny", "dialog")]
