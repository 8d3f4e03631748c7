"""Option bundles: the options several commands share, each defined once.

A bundle is a frozen dataclass whose fields are Typer parameters (``Annotated[type,
typer.Option(...)] = default``). A command takes a bundle as one parameter
(``options: CrawlOptions``); :func:`with_bundles` shows Typer the bundle's fields as the
command's own options and hands the command one bundle instance. So ``nitpicker pipeline``
takes exactly the options of ``crawl``, ``analyze`` and ``report``, with the same names, help and
defaults, and a new crawl option reaches both commands. (``crawl``'s bundles are made from its
flag table, :mod:`nitpicker.cli.crawl_flags`.)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["bundle_fields", "with_bundles"]

F = TypeVar("F", bound="Callable[..., Any]")


def _is_bundle(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def bundle_fields(bundle: type) -> list[inspect.Parameter]:
    """The bundle's fields as keyword-only parameters, with their ``Annotated`` types."""
    hints = typing.get_type_hints(bundle, include_extras=True)
    return [
        inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                          default=field.default, annotation=hints[field.name])
        for field in dataclasses.fields(bundle)
    ]


def with_bundles(command: F) -> F:
    """``command`` with each parameter typed as a bundle replaced by the bundle's fields.

    Typer reads the returned function's signature; when it calls it, the fields' values are
    gathered back into one bundle per parameter. A name in two bundles (or in a bundle and the
    command) is a programming error: ``ValueError`` when the command is defined.
    """
    hints = typing.get_type_hints(command, include_extras=True)
    bundles: dict[str, type] = {}
    parameters: list[inspect.Parameter] = []
    for parameter in inspect.signature(command).parameters.values():
        hint = hints.get(parameter.name, parameter.annotation)
        if _is_bundle(hint):
            bundles[parameter.name] = hint
            parameters.extend(bundle_fields(hint))
        else:
            parameters.append(parameter.replace(annotation=hint,
                                                kind=inspect.Parameter.KEYWORD_ONLY))
    names = [parameter.name for parameter in parameters]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"{command.__name__}: parameter(s) defined twice: {', '.join(twice)}")

    @functools.wraps(command)
    def gathered(**values: Any) -> Any:
        for name, bundle in bundles.items():
            values[name] = bundle(**{field.name: values.pop(field.name)
                                     for field in dataclasses.fields(bundle)})
        return command(**values)

    gathered.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters, return_annotation=hints.get("return", inspect.Signature.empty))
    gathered.__annotations__ = {p.name: p.annotation for p in parameters}
    return typing.cast("F", gathered)
