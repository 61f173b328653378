"""agent_cards_simulator.workers: work spread over forked worker processes, given back in order, nothing lost."""

from __future__ import annotations

import os

import pytest

from agent_cards_simulator.workers import default_jobs, in_order

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forks")


def square(n: int) -> tuple[bool, str]:
    return n % 2 == 0, f"{n}^2 = {n * n}" + "x" * (n * 9000)  # some results span several pipe reads


def lost(n: int) -> tuple[bool, str]:
    return False, f"{n} lost"


@pytest.mark.parametrize("jobs", [1, 2, 3, 16])
def test_results_come_in_item_order_whatever_the_number_of_workers(jobs: int) -> None:
    items = list(range(23))
    assert list(in_order(items, square, jobs, lost)) == [square(n) for n in items]


def test_the_work_runs_in_other_processes() -> None:
    parent = os.getpid()
    pids = {text for _, text in in_order(list(range(6)), lambda _: (True, str(os.getpid())), 3, lost)}
    assert len(pids) == 3 and str(parent) not in pids


def test_a_worker_that_dies_loses_only_what_it_had_not_sent() -> None:
    def dies_at_seven(n: int) -> tuple[bool, str]:
        if n == 7:
            os._exit(3)  # a crash in the worker that has items 1, 4, 7, 10 (of three workers)
        return square(n)

    results = list(in_order(list(range(12)), dies_at_seven, 3, lost))
    assert results == [lost(n) if n in (7, 10) else square(n) for n in range(12)]


def test_a_worker_whose_work_raises_is_answered_for_too() -> None:
    def raises(n: int) -> tuple[bool, str]:
        if n == 2:
            raise RuntimeError("boom")
        return square(n)

    assert list(in_order(list(range(4)), raises, 2, lost)) == [square(0), square(1), lost(2), square(3)]


def test_a_reader_that_stops_early_leaves_no_worker_behind() -> None:
    results = in_order(list(range(50)), square, 2, lost)
    assert next(results) == square(0)
    results.close()  # as `| head` does
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left, running or unreaped


def test_default_jobs_is_the_cores_this_process_may_use() -> None:
    assert 1 <= default_jobs() <= (os.cpu_count() or 1)


def test_without_processes_to_be_had_the_work_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    forks = iter([True])

    def fork() -> int:
        if next(forks, False):
            return real_fork()  # the first worker starts; the second cannot
        raise BlockingIOError(11, "Resource temporarily unavailable")

    real_fork = os.fork
    monkeypatch.setattr(os, "fork", fork)
    parent = str(os.getpid())
    assert [text for _, text in in_order(list(range(5)), lambda _: (True, str(os.getpid())), 3, lost)] == [parent] * 5
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # the worker that did start was stopped and reaped
