"""The command line: each command parses its options and calls one function of the library.

Only this module turns the library's exceptions into click errors and exit codes
(0 clean, 1 problems found, 2 usage).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recordtool import __version__

if TYPE_CHECKING:
    from recordtool.project import Project


def _open(root: Path | None) -> Project:
    from recordtool.config import ConfigError
    from recordtool.project import open_project

    try:
        return open_project(root=root) if root else open_project()
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


root_option = click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The project folder (default: the nearest one above the current folder).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recordtool")
def cli() -> None:
    """A knowledge record whose claims check themselves.

    Entries (literature, reading notes, theory claims) are YAML files under record/. Claims
    name executable checks; `verify` runs them and keeps verdicts; `render` writes
    backlinked Markdown pages.
    """


@cli.command()
@root_option
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def validate(root: Path | None, strict: bool, fmt: str) -> None:
    """Check every entry of the record: schema, ids, citations, mentions.

    Prints each problem with its place (file:line:col) and exits 0 when there is no error,
    1 when there is (with --strict, warnings count as errors), 2 on a usage error.
    """
    project = _open(root)
    errors, warnings = project.errors, project.warnings
    failed = bool(errors) or (strict and bool(warnings))
    if fmt == "json":
        payload = {
            "ok": not failed,
            "entries": len(project.record.entries),
            "errors": len(errors),
            "warnings": len(warnings),
            "problems": [p.as_dict() for p in project.problems],
        }
        click.echo(json.dumps(payload, indent=2))
    else:
        for problem in project.problems:
            click.echo(str(problem), err=problem.severity == "error" or strict)
        summary = (f"{len(project.record.entries)} entries: {len(errors)} "
                   f"error{'s' if len(errors) != 1 else ''}, {len(warnings)} warning{'s' if len(warnings) != 1 else ''}")
        click.echo(summary)
    sys.exit(1 if failed else 0)


@cli.command(name="list")
@root_option
@click.option("--kind", "kind_name", default=None, help="Only entries of this kind (literature, note, theory or a prefix).")
@click.option("--tag", default=None, help="Only entries with this tag.")
def list_(root: Path | None, kind_name: str | None, tag: str | None) -> None:
    """List the record's entries: id, kind, status and title, one a line."""
    project = _open(root)
    kind = None
    if kind_name is not None:
        kind = project.config.kind_named(kind_name)
        if kind is None:
            names = ", ".join(k.name for k in project.config.kinds.values())
            raise click.BadParameter(f"unknown kind '{kind_name}'; known kinds: {names}", param_hint="--kind")
    _report_errors(project)
    for entry_id, entry in project.record.entries.items():
        if kind is not None and entry.kind != kind.name:
            continue
        if tag is not None and tag not in entry.tags:
            continue
        title = entry.display_title.replace("\n", " ")
        if len(title) > 100:
            title = title[:99] + "…"
        click.echo(f"{entry_id:<12} {entry.kind:<10} {entry.status:<10} {title}")


@cli.command()
@root_option
@click.argument("entry_id", metavar="ID")
def show(root: Path | None, entry_id: str) -> None:
    """Show one entry with its citations both ways and its backlinks."""
    project = _open(root)
    entry = project.record.entries.get(entry_id.upper()) or project.record.entries.get(entry_id)
    if entry is None:
        from recordtool.problems import did_you_mean

        hint = did_you_mean(entry_id, project.record.entries)
        raise click.ClickException(f"no entry {entry_id} in the record{hint}")
    from recordtool.terminal import format_entry

    click.echo(format_entry(project.graph, entry.id))


@cli.command()
@root_option
@click.argument("kind_name", metavar="KIND")
@click.option("--title", required=True, help="The new entry's title.")
def new(root: Path | None, kind_name: str, title: str) -> None:
    """Create an entry of KIND (literature, note, theory) with the next free id.

    Writes a valid file from a template and prints its path; never overwrites a file.
    """
    from recordtool.template import TemplateError, create_entry

    project = _open(root)
    kind = project.config.kind_named(kind_name)
    if kind is None:
        names = ", ".join(k.name for k in project.config.kinds.values())
        raise click.BadParameter(f"unknown kind '{kind_name}'; known kinds: {names}", param_hint="KIND")
    try:
        path = create_entry(project.config, kind, title)
    except TemplateError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(project.config.relative(path))


def _report_errors(project: Project) -> None:
    """Tell, on stderr, that some entries could not be loaded (without stopping)."""
    if project.errors:
        click.echo(f"warning: {len(project.errors)} problem(s) in the record; run `recordtool validate`", err=True)


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="recordtool")
