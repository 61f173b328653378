"""Where ``agent-cards fuzz`` keeps what it keeps between runs: under the user's cache folder, never the
current one (a command writes into the folder it is run in only what it is asked to write).

``$XDG_CACHE_HOME/agent-cards/`` (``~/.cache/agent-cards/`` when it is unset or not absolute, as the XDG
base directory rules say) holds hypothesis's own files (``hypothesis/``: the constants and Unicode tables it
caches, which it would otherwise put in ``./.hypothesis/``), the example database (:func:`example_folder`)
and the violations a run writes when no ``--out`` is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_folder(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/agent-cards``, else ``~/.cache/agent-cards`` (not made here)."""
    values = os.environ if env is None else env
    base = values.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG rules say to ignore it
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agent-cards"


def example_folder(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the fuzzer's example database (hypothesis's ``DirectoryBasedExampleDatabase``)."""
    return cache_folder(env) / "fuzz-examples"


def hypothesis_folder(env: Mapping[str, str] | None = None) -> Path:
    """hypothesis's own storage folder (its ``set_hypothesis_home_dir``)."""
    return cache_folder(env) / "hypothesis"


def failures_folder(env: Mapping[str, str] | None = None) -> Path:
    """Where a violation's scenario is written when ``--out`` is not given."""
    return cache_folder(env) / "fuzz-failures"
