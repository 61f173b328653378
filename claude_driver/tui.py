"""The interactive CLI under tmux: start it, read its screen, type into it, wait on what it shows."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from agent_cards_claude_driver.install import HasBaseUrl
from agent_cards_claude_driver.runs import plugin_args
from agent_cards_claude_driver.sandbox import Sandbox, remove_leftovers

#: the permission dialog's question, and its choice of a plain Yes shown chosen ("Yes, and don't ask
#: again" is another choice)
DIALOG = "Do you want to proceed?"
YES_CHOSEN = re.compile(r"❯ (?:\d+\. )?Yes(?!,)")
#: The dialog card's header, with its place among the dialogs of one reply (``Tool use … 1 of 2``), and the
#: card's line naming the call (``Agent(<description>)``, alone on its line: the transcript's own lines for
#: the same call begin with a bullet).
CARD_HEADER = re.compile(r"^ *Tool use\b(?:.*?(\d+ of \d+))?", re.MULTILINE)
CARD_CALL = re.compile(r"^ *Agent\((.*)\) *$", re.MULTILINE)
#: The tmux paste buffer a paste goes through (deleted once pasted).
PASTE_BUFFER = "agent-cards-paste"


def dialog_on(screen: str) -> tuple[str, str] | None:
    """What the permission dialog on ``screen`` is about: its place among the reply's dialogs (``1 of 2``,
    empty when it is alone) and the description its card names (empty when it names none); None: no
    dialog. Parallel calls are asked one dialog after another with no screen between them, so this, not the
    question alone, tells one dialog from the next."""
    end = screen.rfind(DIALOG)
    if end < 0:
        return None
    headers = list(CARD_HEADER.finditer(screen, 0, end))
    start = headers[-1].start() if headers else 0
    place = (headers[-1].group(1) or "") if headers else ""
    named = CARD_CALL.findall(screen, start, end)
    return place, named[-1] if named else ""


class Tui:
    """The interactive CLI in a detached tmux session on a private server.

    ``with Tui(claude, sandbox, [plugin], model) as tui:`` starts it and waits for the
    input box; leaving the block kills the private tmux server and removes leftovers.
    """

    def __init__(
        self,
        claude: Path,
        sandbox: Sandbox,
        plugin_dirs: Sequence[Path],
        model: HasBaseUrl,
        *,
        env_extra: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
        width: int = 200,
        height: int = 50,
        ready_timeout: float = 30.0,
    ) -> None:
        self.claude = claude
        self.sandbox = sandbox
        self.argv = [str(claude), *plugin_args(plugin_dirs), *extra_args]
        self.env = sandbox.env(model.base_url, env_extra)
        self.width, self.height = width, height
        self.ready_timeout = ready_timeout
        tag = uuid.uuid4().hex[:10]
        self.server = f"ac-e2e-{tag}"
        self.session = "e2e"
        self._dir = sandbox.tmp / f"tui-{tag}"
        self._pidfile = self._dir / "cli.pid"
        self.started_at = 0.0
        self.pid: int | None = None

    # tmux plumbing
    def _tmux_env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.sandbox.home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TMUX_TMPDIR": str(self.sandbox.tmp),
            "SHELL": "/bin/sh",
        }

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.server, *args],
            env=self._tmux_env(),
            capture_output=True,
            text=True,
            check=check,
            timeout=15,
            stdin=subprocess.DEVNULL,
        )

    def _write_launchers(self) -> Path:
        self._dir.mkdir(parents=True, exist_ok=True)
        inner = self._dir / "inner.sh"
        env_words = " ".join(shlex.quote(f"{k}={v}") for k, v in self.env.items())
        inner.write_text(
            f"echo $$ > {shlex.quote(str(self._pidfile))}\n"
            f"cd {shlex.quote(str(self.sandbox.project))} || exit 97\n"
            f"exec env -i {env_words} {shlex.join(self.argv)}\n",
            encoding="utf-8",
        )
        outer = self._dir / "outer.sh"
        outer.write_text(f"sh {shlex.quote(str(inner))}\necho EXITED-$?\nsleep 30\n", encoding="utf-8")
        return outer

    # lifecycle
    def start(self) -> Tui:
        outer = self._write_launchers()
        self.started_at = time.monotonic()
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            f"sh {shlex.quote(str(outer))}",
        )
        self.wait_for(r"(?m)^\s*❯", self.ready_timeout)
        self.pid = self._read_pid()
        return self

    def _read_pid(self) -> int | None:
        try:
            pid = int(self._pidfile.read_text().strip())
        except (OSError, ValueError):
            return None
        self.sandbox.pids.add(pid)
        return pid

    def close(self) -> None:
        pid = self.pid or self._read_pid()
        self._tmux("kill-server", check=False)
        if pid is not None and self._still_ours(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        uid = os.getuid() if hasattr(os, "getuid") else 0
        (self.sandbox.tmp / f"tmux-{uid}" / self.server).unlink(missing_ok=True)
        remove_leftovers(self.sandbox.project, self.sandbox.pids, [self.sandbox.tmp])
        shutil.rmtree(self._dir, ignore_errors=True)

    def _still_ours(self, pid: int) -> bool:
        """True only while ``pid`` is still this CLI (guards against pid reuse)."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return str(self.claude).encode() in cmdline

    def __enter__(self) -> Tui:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # driving
    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.session).stdout

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> str:
        """Poll the screen until ``pattern`` matches; return the screen or raise TimeoutError."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if regex.search(text):
                return text
            if time.monotonic() >= deadline:
                raise TimeoutError(f"pattern {regex.pattern!r} not on screen:\n{text}")
            time.sleep(0.3)

    def input_line(self, screen: str | None = None) -> str:
        """What the input box holds now: the text after the last ``❯`` prompt on the screen."""
        lines = re.findall(r"(?m)^\s*❯\s?(.*)$", self.screen() if screen is None else screen)
        return lines[-1].strip() if lines else ""

    def type(self, text: str, *, enter: bool = True, confirm: bool = True, timeout: float = 15.0) -> None:
        """Type ``text`` into the input box and, with ``enter``, submit it.

        Enter is pressed only once the text shows in the input box (pressed while the CLI still takes
        the text in, it can be swallowed); with ``confirm``, again if the box still holds the text
        afterwards (leave it off for a command after which the screen no longer changes, as ``/exit``).
        """
        self._tmux("send-keys", "-t", self.session, "-l", text)
        if not enter:
            return
        tail = " ".join(text.split())[-12:]
        deadline = time.monotonic() + timeout
        while tail not in " ".join(self.input_line().split()):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"typed text {text!r} never showed in the input box:\n{self.screen()}")
            time.sleep(0.05)
        self.key("Enter")
        pressed = time.monotonic()
        while confirm and tail in " ".join(self.input_line().split()):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"typed text {text!r} was not submitted:\n{self.screen()}")
            if time.monotonic() - pressed > 2.0:  # still in the box well after Enter: it was lost
                self.key("Enter")
                pressed = time.monotonic()
            time.sleep(0.05)

    def paste(self, text: str, *, timeout: float = 15.0) -> None:
        """Paste ``text`` into the input box as a terminal pastes it (bracketed: its line breaks stay text,
        where typed ones would submit each line) and submit it. Enter waits for the box to have taken the paste
        in, and is pressed again while the box still holds it (a turn running queues it, which empties the box)."""
        before = self.input_line()
        self._tmux("set-buffer", "-b", PASTE_BUFFER, "--", text)
        self._tmux("paste-buffer", "-p", "-d", "-b", PASTE_BUFFER, "-t", self.session)
        deadline = time.monotonic() + timeout
        while self.input_line() == before:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"pasted text {text[:60]!r} never showed in the input box:\n{self.screen()}")
            time.sleep(0.05)
        self.key("Enter")
        pressed = time.monotonic()
        while self.input_line():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"pasted text {text[:60]!r} was not submitted:\n{self.screen()}")
            if time.monotonic() - pressed > 2.0:
                self.key("Enter")
                pressed = time.monotonic()
            time.sleep(0.05)

    def key(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.session, *keys)

    def answer_dialog(self, yes: bool, screen: str | None = None) -> bool:
        """One key for the permission dialog on ``screen`` (else the screen now); whether the dialog went.

        Yes is pressed only once the screen shows it chosen (plan mode's dialog offers No first), the choice
        moved one Down at a time: a slow redraw would let a second Down pass Yes. The dialog may ignore a key
        while it is being drawn, and may be drawn again with its first choice: a caller presses until it goes,
        and each press looks at the screen again."""
        screen = self.screen() if screen is None else screen
        if yes and not YES_CHOSEN.search(screen):
            self.key("Down")
            with contextlib.suppress(TimeoutError):
                self.wait_for(YES_CHOSEN, 10)
            return False
        answered = dialog_on(screen)
        self.key("Enter" if yes else "Escape")
        gone = time.monotonic() + 2.0
        # Gone once no dialog about the same call is left: the next call's dialog may follow at once.
        while answered is not None and dialog_on(self.screen()) == answered:
            if time.monotonic() >= gone:
                return False
            time.sleep(0.1)
        return True

    def say_yes(self, timeout: float = 30.0) -> None:
        """Answer the permission dialog on screen Yes (see :meth:`answer_dialog`)."""
        self._say(True, timeout)

    def say_no(self, timeout: float = 30.0) -> None:
        """Answer the permission dialog on screen No, with Esc (see :meth:`answer_dialog`)."""
        self._say(False, timeout)

    def _say(self, yes: bool, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.answer_dialog(yes):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the dialog was never answered {'Yes' if yes else 'No'}:\n{self.screen()}")

    def wait_idle(self, timeout: float = 30.0, settle: float = 0.6) -> str:
        """Wait until the footer no longer shows a running turn, for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        quiet_since: float | None = None
        while True:
            text = self.screen()
            now = time.monotonic()
            if "esc to interrupt" in text:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= settle:
                return text
            if now >= deadline:
                raise TimeoutError(f"turn still running:\n{text}")
            time.sleep(0.2)

    def exit(self, timeout: float = 20.0) -> int:
        """Type ``/exit`` and return the CLI's exit status."""
        self.type("/exit", confirm=False)
        match = re.search(r"EXITED-(\d+)", self.wait_for(r"EXITED-\d+", timeout))
        assert match is not None
        return int(match.group(1))

