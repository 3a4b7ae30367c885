"""Scenarios as values: load a TOML file, apply typed overrides, resolve, hash.

    import rttlab
    s = rttlab.Scenario.load("examples/scenarios/dumbbell-n10-droptail.toml")
    s2 = s.with_({"topology.bottleneck.bandwidth": "20Mbps", "flows.0.count": 5, "simulation.name": "123"})
    s2.resolved()      # dict: every default filled in, as the Rust core reads it
    s2.hash            # content hash: canonical scenario + seed + rttlab version + schema version
    s2.to_toml()       # the scenario as written (with the overrides), TOML text
    rttlab.simulate(s2)

Overrides keep their TOML type (``"123"`` stays a string, ``5`` an integer, ``[..]`` a list): they are
applied to the parsed table in Python and the whole table goes to the core as TOML text. The
canonical (resolved) form is whatever the core serialises (``_core.resolve_scenario``), never a
Python copy of the defaults, so it follows the simulator's config as it changes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rttlab import __version__, _core
from rttlab.sim import versions
from rttlab.sim.versions import SCHEMA


def toml_error(text: str, e: tomllib.TOMLDecodeError) -> str:
    """tomllib's message, with the key named where it only says "Cannot overwrite a value" (a key
    given twice): ``line 8: duplicate key `seed` in [simulation]``, the table being the nearest
    ``[header]`` above it."""
    import re

    message = str(e)
    m = re.fullmatch(r"Cannot overwrite a value \(at line (\d+), column (\d+)\)", message)
    lines = text.splitlines()
    if m and 1 <= int(m.group(1)) <= len(lines) and "=" in lines[int(m.group(1)) - 1]:
        n = int(m.group(1))
        key = lines[n - 1].split("=", 1)[0].strip()
        table = next(
            (
                line.split("#", 1)[0].strip()
                for line in reversed(lines[: n - 1])
                if line.lstrip().startswith("[")
            ),
            None,
        )
        return f"line {n}, column {m.group(2)}: duplicate key `{key}`" + (
            f" in {table}" if table else ""
        )
    return message


def _error(message: str) -> _core.ScenarioError:
    return _core.ScenarioError(message)


def parse_assignment(text: str) -> tuple[str, Any]:
    """``key.path=value`` → (path, value): the value read as TOML where it can be (``5``,
    ``true``, ``"x"``, ``[1, 2]``), else the bare text (``20Mbps``), as ``--set`` does in the core."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise _error(f"--set {text}: expected key.path=value")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key.strip(), value


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` (dotted; numeric segments index lists, ``flows.0.count``) in ``doc`` in place,
    creating missing tables; the same rules as the core's ``apply_override``."""
    keys = path.split(".")
    if any(not k for k in keys):
        raise _error(f"override {path}: empty key in path")
    node: Any = doc
    for depth, key in enumerate(keys):
        last = depth + 1 == len(keys)
        walked = ".".join(keys[: depth + 1])
        if isinstance(node, dict):
            if last:
                node[key] = value
                return
            node = node.setdefault(key, {})
        elif isinstance(node, list):
            if not key.isdigit():
                raise _error(f"override {path}: {walked} indexes a list: use a number")
            i = int(key)
            if i >= len(node):
                raise _error(
                    f"override {path}: {walked}: index {i} out of range (list has {len(node)})"
                )
            if last:
                node[i] = value
                return
            node = node[i]
        else:
            raise _error(f"override {path}: {'.'.join(keys[:depth])} is not a table")


def _hash(resolved: dict[str, Any], seed: int, form: int) -> str:
    """The hash recipe: the canonical scenario (as JSON, keys sorted) in form ``form``, the seed,
    the rttlab version, the scenario schema (= the form) and the result schema."""
    key = {
        "scenario": resolved,
        "seed": seed,
        "rttlab": __version__,
        "scenario_schema": form,
        "result_schema": SCHEMA,
    }
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class Scenario:
    """One simulation scenario: the TOML table as written plus overrides, immutable."""

    doc: dict[str, Any]
    #: Where it was loaded from (for messages only; not part of the hash).
    source: str | None = field(default=None, compare=False)

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise _error(f"cannot read scenario {p}: {e.strerror or e}") from None
        return cls.from_toml(text, source=str(p))

    @classmethod
    def from_toml(cls, text: str, source: str | None = None) -> Scenario:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise _error(f"{source or 'scenario'}: not valid TOML: {toml_error(text, e)}") from None
        return cls(doc, source)

    def with_(self, overrides: Mapping[str, Any] | Iterable[str] = (), /, **kw: Any) -> Scenario:
        """A new scenario with ``overrides`` applied: a mapping of dotted paths to values of any
        TOML type, or ``key.path=value`` strings (as ``--set``). Keyword arguments use ``__`` for
        dots: ``with_(simulation__seed=3)``."""
        doc = copy.deepcopy(self.doc)
        items = (
            list(overrides.items())
            if isinstance(overrides, Mapping)
            else [parse_assignment(o) for o in overrides]
        )
        items += [(k.replace("__", "."), v) for k, v in kw.items()]
        for path, value in items:
            set_path(doc, path, value)
        return Scenario(doc, self.source)

    def with_seed(self, seed: int) -> Scenario:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _error(f"seed must be a non-negative integer, got {seed!r}")
        return self.with_({"simulation.seed": seed})

    def to_toml(self, resolved: bool = False) -> str:
        """The scenario as TOML text: as written (with overrides), or with ``resolved=True`` the
        canonical form with every default filled in."""
        if resolved:
            return self.canonical_toml
        import tomli_w

        return tomli_w.dumps(self.doc)

    @property
    def canonical_toml(self) -> str:
        """The core's canonical TOML: parse with every default filled, written back with exact
        units. Raises :class:`rttlab.ScenarioError` naming the key if the scenario is invalid."""
        return self._canonical[0]

    @cached_property
    def _canonical(self) -> tuple[str, dict[str, Any]]:
        return self._canonical_as(versions.SCENARIO_SCHEMA)

    def _canonical_as(self, form: int) -> tuple[str, dict[str, Any]]:
        """The canonical text in form ``form`` and the same as a table (what ``tomllib.loads`` of
        the text gives, read by the core: a sweep hashes every run it plans)."""
        try:
            return _core.resolve_scenario_table(self.to_toml(), form=form)
        except _core.ScenarioError as e:
            raise _error(f"{self.source}: {e}" if self.source else str(e)) from None

    def resolved(self) -> dict[str, Any]:
        """The canonical form as a table (a fresh copy: the caller may change it)."""
        return tomllib.loads(self.canonical_toml)

    @property
    def _resolved(self) -> dict[str, Any]:
        # Read once per scenario for the hash and the seed (a sweep computes both per run);
        # never handed out, so never changed.
        return self._canonical[1]

    @property
    def seed(self) -> int:
        return int(self._resolved["simulation"]["seed"])

    @property
    def name(self) -> str | None:
        return self.doc.get("simulation", {}).get("name")

    @cached_property
    def hash(self) -> str:
        """SHA-256 (hex, first 20 bytes) of the canonical scenario, its seed, the rttlab version
        and the scenario and result schema versions: the key of a run in the store."""
        # The form is read when the hash is: a test sets versions.SCENARIO_SCHEMA = 1 to write a
        # store as rttlab did before form 2.
        return _hash(self._resolved, self.seed, versions.SCENARIO_SCHEMA)

    @cached_property
    def form1_hash(self) -> str:
        """The key the same run had under canonical form 1 (scenario schema 1): a store written
        before form 2 holds the run under this hash (docs/experiments.md, "Canonical form"). The
        sweep looks it up only for runs whose :attr:`hash` is not stored
        (:func:`rttlab.experiments.sweep.as_stored`)."""
        return _hash(self._canonical_as(1)[1], self.seed, 1)

    def get(self, path: str, default: Any = None) -> Any:
        """The value at a dotted path in the scenario as written (``flows.0.count``)."""
        node: Any = self.doc
        for key in path.split("."):
            if isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            elif isinstance(node, dict) and key in node:
                node = node[key]
            else:
                return default
        return node
