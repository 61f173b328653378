"""Work spread over worker processes, its results given back in order: ``agent-cards replay``'s ``--jobs``.

A replay in virtual time is pure computation, one scenario independent of the next, so a folder of them
spreads over the machine's cores. The workers are forks of the command, made once everything is read
and imported: they start at once and share the parent's memory. Worker ``w`` of ``n`` takes items
``w``, ``w + n``, …; each result is a short text (what the command prints for that item) sent back on
the worker's own pipe, and the parent gives results in item order as soon as each one's turn comes.

Nothing is lost: a worker that ends before sending all its results (killed, crashed) leaves the
parent with the items it did not send, each answered by ``lost(item)``, and the parent never waits on
a worker that is gone. Where ``os.fork`` does not exist, or for one job, the work runs in this process.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import struct
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

_HEAD = struct.Struct(">IIB")  # item index, text length in bytes, a flag (the item's verdict)


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def in_order(
    items: Sequence[T], work: Callable[[T], tuple[bool, str]], jobs: int, lost: Callable[[T], tuple[bool, str]]
) -> Generator[tuple[bool, str], None, None]:
    """``work(item)`` for every item, in item order, over ``jobs`` worker processes (closing the generator
    early stops them)."""
    jobs = min(jobs, len(items))
    if jobs <= 1 or not hasattr(os, "fork"):
        yield from map(work, items)
        return
    for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice, once per fork
        stream.flush()
    try:
        pipes = _start(items, work, jobs)
    except OSError:  # no more processes or descriptors to be had: the work runs here, as with one job
        yield from map(work, items)
        return
    try:
        yield from _collect(items, pipes, lost)
    finally:
        _stop(pipes)  # all done, or a reader that stopped early (| head, Ctrl-C): stop what is left


def _start(items: Sequence[T], work: Callable[[T], tuple[bool, str]], jobs: int) -> dict[int, int]:
    """The workers, each by the read end of its pipe (read end -> pid); none is left when it raises."""
    pipes: dict[int, int] = {}
    try:
        for worker in range(jobs):
            read_end, write_end = os.pipe()
            pipes[read_end] = 0  # no worker yet
            # Ctrl-C is held off across the fork: a worker that got it before its own handler was set would
            # raise KeyboardInterrupt into the parent's code, and go on as a second parent.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            pid = -1
            try:
                pid = os.fork()
            except OSError:
                os.close(write_end)
                raise
            finally:
                if pid != 0:
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if pid == 0:  # the worker: never returns
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it; the parent stops the others
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                os.close(read_end)
                _serve(items, work, worker, jobs, write_end)
            os.close(write_end)
            pipes[read_end] = pid
    except BaseException:
        _stop(pipes)
        raise
    return pipes


def _stop(pipes: dict[int, int]) -> None:
    for read_end, pid in pipes.items():
        os.close(read_end)
        if pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
    pipes.clear()


def _serve(items: Sequence[T], work: Callable[[T], tuple[bool, str]], worker: int, jobs: int, out: int) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the parent, which stops the workers
        with os.fdopen(out, "wb") as pipe:
            for index in range(worker, len(items), jobs):
                passed, text = work(items[index])
                data = text.encode("utf-8", "surrogateescape")
                pipe.write(_HEAD.pack(index, len(data), passed) + data)
                pipe.flush()
    except BaseException:  # a worker reports nothing itself: the parent answers for what it did not send
        code = 1
    finally:
        os._exit(code)  # never the parent's exit handlers, nor a second flush of its buffers


def _collect(
    items: Sequence[T], pipes: dict[int, int], lost: Callable[[T], tuple[bool, str]]
) -> Iterator[tuple[bool, str]]:
    done: dict[int, tuple[bool, str]] = {}
    buffers = {fd: bytearray() for fd in pipes}
    following = 0
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        while following < len(items):
            if not selector.get_map():  # every worker is gone: what none of them sent is lost
                done.update({i: lost(items[i]) for i in range(following, len(items)) if i not in done})
            else:
                for key, _ in selector.select():
                    fd = int(key.fd)
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    buffer = buffers[fd]
                    buffer += chunk
                    while len(buffer) >= _HEAD.size:
                        index, size, passed = _HEAD.unpack_from(buffer)
                        if len(buffer) < _HEAD.size + size:
                            break
                        text = bytes(buffer[_HEAD.size:_HEAD.size + size]).decode("utf-8", "surrogateescape")
                        done[index] = (bool(passed), text)
                        del buffer[:_HEAD.size + size]
            while following in done:
                yield done.pop(following)
                following += 1
