"""A mapping whose values are made when first asked for: what the entry cache keeps of the record.

The entry cache keeps some values as where to find them (an entry as its place in a shard's
entries file, an entry's mentions as its path, read from its shard's scans file), made only
when a page or a command asks for them: ``recordtool.record.load.Entries``,
``recordtool.record.cache.KeptScans`` and ``recordtool.record.graph.Composed`` (the bodies
composed, those kept read with their mentions). All are this mapping: a dict held inside, never a
subclass of ``dict``, because code compiled with mypyc reads anything typed as a dict (a
subclass too) with the dict's own functions, past the methods that make the values
(``recordtool/compiled.py``). Every way of reading it as a mapping gives made values; ``held``
gives what is held, made or not.
"""

from __future__ import annotations

from collections.abc import Iterator, KeysView, Mapping, MutableMapping
from typing import Any, TypeVar

V = TypeVar("V")


class Lazy(MutableMapping[str, V]):
    """A mapping of ids to values, some held as what makes them (see the module): a subclass
    says how in ``__getitem__``, and keeps what it made (``_data[key] = value``)."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}  # id -> its value, or what makes it

    def __getitem__(self, key: str) -> V:
        raise NotImplementedError

    def held(self, key: str) -> Any:
        """What is held for ``key`` as it is, made or not; None when ``key`` is not here."""
        return self._data.get(key)

    def keep(self, key: str, held: Any) -> None:
        """Hold ``held`` for ``key``: its value, or what makes it when asked for."""
        self._data[key] = held

    def get(self, key: str, default: Any = None) -> Any:  # (Mapping's asks ``[]`` and catches KeyError)
        return self[key] if key in self._data else default

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setitem__(self, key: str, value: V) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def copy(self) -> dict[str, V]:
        """A plain dict of it, every value made."""
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return self.copy() == (other.copy() if isinstance(other, Lazy) else dict(other.items()))

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.copy()!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (sent to a worker) as the plain dict of its values, made
        return (dict, (self.copy(),))
