"""The project's one way to write a record: :class:`Value` (immutable) and :class:`Record` (mutable).

Every package of the project writes its records so, the mod's included: the command hook and
``fake-lich`` build them on every call, and ``dataclasses`` (which imports ``inspect`` and ``re``) would
cost each of those starts more than the whole of its own work (``python -m bench`` prints what the
import costs beside the hook's figures). A class deriving straight from :class:`Value` or
:class:`Record` gets what a dataclass gives, as far as this project uses it:

- its **fields** are the names its own class body annotates, in order; a value assigned there is that
  field's default (the order of the constructor's parameters, of the repr and of :func:`plain`), and
  ``field(default_factory=F)`` a default made anew for each record by calling ``F``;
- one shared ``__init__`` taking the fields by position or keyword, then calling ``__post_init__``
  when the class has one; a call that does not fit raises the ``TypeError`` Python would;
- ``repr()`` as ``Name(field=value, …)``;
- a :class:`Value` equals another of its class with equal fields, hashes by them, and refuses
  assignment after ``__init__``; a :class:`Record` is compared by identity;
- :func:`replace` copies a record with some fields changed, as ``dataclasses.replace``.

Nothing is generated per class: ``__init__`` checks the arguments against the class's field names
and installs them as the instance's ``__dict__`` in one step, so a class costs no more to define than
a plain one, and a record no more to build than a few dict operations. (No ``__slots__``: with them,
every field would have to be set one by one.) The type checker sees both bases as
``dataclass_transform`` s, so each record's constructor is checked. A subclass of a record class has
its base's fields, then its own.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, NoReturn, TypeVar, dataclass_transform

    T = TypeVar("T")
    R = TypeVar("R", bound="_Fields")
else:
    def dataclass_transform(**_options: object) -> object:
        """For the type checker only: at run time the base classes below stay as they are."""
        return lambda cls: cls

__all__ = ["Record", "Value", "field", "plain", "replace"]

_set = object.__setattr__


class _Fresh:
    """A default made anew for each record (``field(default_factory=...)``)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], object]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is ``default_factory()``, called for each record that leaves it out."""
    fresh: Any = _Fresh(default_factory)
    made: T = fresh  # the type checker sees the value it stands for
    return made


def replace(record: R, /, **changes: object) -> R:
    """A copy of ``record`` with the fields named changed (``dataclasses.replace``)."""
    return type(record)(**{**record.__dict__, **changes})


def _made_fresh(names: tuple[str, ...], own: Callable[[Any], None] | None) -> Callable[[Any], None]:
    """The ``__post_init__`` of a class with ``field(default_factory=...)`` defaults: each one left out is
    made, then the class's own ``__post_init__`` (``own``) runs."""

    def make_fresh(self: Any) -> None:
        values = self.__dict__
        for name in names:
            value = values[name]
            if type(value) is _Fresh:
                values[name] = value.factory()
        if own is not None:
            own(self)

    return make_fresh


class _Fields:
    """What Value and Record share: the fields read from the class body, ``__init__`` and ``repr``."""

    if TYPE_CHECKING:
        _fields: ClassVar[tuple[str, ...]]
        _field_set: ClassVar[frozenset[str]]
        _defaults: ClassVar[dict[str, object]]
        _post_init: ClassVar[Any]
        _required: ClassVar[int]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        own, base = cls.__dict__, cls.__mro__[1]
        # A subclass keeps the fields of the record it derives from and adds its own after them, as a
        # dataclass's subclass does (a test's record with methods of its own, say).
        inherited: tuple[str, ...] = getattr(base, "_fields", ())
        cls._fields = inherited + tuple(name for name in own.get("__annotations__", ()) if name not in inherited)
        cls._field_set = frozenset(cls._fields)
        cls._defaults = {**getattr(base, "_defaults", {}), **{name: own[name] for name in cls._fields if name in own}}
        cls._post_init = getattr(cls, "__post_init__", None)
        fresh = tuple(name for name, default in cls._defaults.items() if type(default) is _Fresh)
        if fresh:  # only such classes pay for it
            cls._post_init = _made_fresh(fresh, cls._post_init)
        # positional calls of at least this many arguments leave only defaulted fields out
        cls._required = max((n + 1 for n, name in enumerate(cls._fields) if name not in cls._defaults), default=0)

    def __init__(self, *args: object, **kwargs: object) -> None:
        cls = type(self)
        fields = cls._fields
        if not kwargs and cls._required <= len(args) <= len(fields):  # positional: the commonest call, made short
            values = dict(zip(fields, args, strict=False))
            if len(args) < len(fields):
                defaults = cls._defaults
                for name in fields[len(args):]:
                    values[name] = defaults[name]
            _set(self, "__dict__", values)
            if cls._post_init is not None:
                cls._post_init(self)
            return
        values = cls._defaults.copy()
        if args:
            if len(args) > len(fields) or not kwargs.keys().isdisjoint(fields[:len(args)]):
                _refuse(cls, args, kwargs)
            values.update(zip(fields, args, strict=False))
        values.update(kwargs)
        if len(values) != len(fields) or not values.keys() <= cls._field_set:
            _refuse(cls, args, kwargs)
        _set(self, "__dict__", values)
        if cls._post_init is not None:
            cls._post_init(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"


def _refuse(cls: type[_Fields], args: tuple[object, ...], kwargs: dict[str, object]) -> NoReturn:
    """The TypeError Python would raise for a call that does not fit the record's fields."""
    name, fields = cls.__name__, cls._fields
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} arguments but {len(args)} were given")
    for field in fields[:len(args)]:
        if field in kwargs:
            raise TypeError(f"{name}() got multiple values for argument {field!r}")
    for key in kwargs:
        if key not in cls._field_set:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
    missing = [field for field in fields[len(args):] if field not in kwargs and field not in cls._defaults]
    raise TypeError(f"{name}() missing required argument {missing[0]!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Value(_Fields):
    """An immutable record (a frozen dataclass): equal and hashed by its fields."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        values = self.__dict__
        return hash(tuple(values[name] for name in self._fields))


@dataclass_transform(eq_default=False, field_specifiers=(field,))
class Record(_Fields):
    """A mutable record: fields set freely, compared by identity."""


_SCALARS = frozenset({str, int, bool, float, type(None)})


def plain(value: Any) -> Any:
    """``value`` as JSON values: a record as the dict of its fields in order (``asdict``), a tuple as a list."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, _Fields):
        out = {}
        for name in value._fields:
            item = getattr(value, name)
            out[name] = item if type(item) in _SCALARS else plain(item)
        return out
    if isinstance(value, (tuple, list)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value
