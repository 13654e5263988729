"""The command line: each command parses its options and calls one function of the library.

The commands of entries and pages are here, those of verdicts in ``recordtool.cli.verdicts``;
what they share (printing, reading the project, options, exit codes) in ``recordtool.cli.common``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import recordtool.cli.common as common
import recordtool.cli.verdicts as verdicts
from recordtool import __version__
from recordtool.meter import Meter
from recordtool.safetext import some, terminal

if TYPE_CHECKING:
    from recordtool.record.config import Kind
    from recordtool.record.project import Project


@click.group(cls=common.Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recordtool")
def cli() -> None:
    """A knowledge record whose claims check themselves.

    Entries (literature, reading notes, theory claims) are YAML files under record/. Claims
    name executable checks; `verify` runs them and keeps verdicts; `render` writes
    backlinked Markdown pages.
    """


@cli.command(short_help="Check the record: schema, ids, citations, mentions.")
@common.root_option
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@common.format_option
@common.jobs_option
@common.no_cache_option
def validate(root: Path | None, strict: bool, fmt: str, jobs: int | None, no_cache: bool) -> None:
    """Check every entry of the record: schema, ids, citations, mentions.

    Prints each problem with its place (file:line:col) on stderr, the errors first, then
    the orphans (entries that nothing links to and that link to nothing), and exits 0 when there is no error, 1 when
    there is (with --strict, warnings count as errors), 2 on a usage error.
    """
    project = common.open_record(root, jobs, cache=not no_cache)
    errors, warnings = project.errors, project.warnings
    orphans = project.graph.orphans()
    failed = bool(errors) or (strict and bool(warnings))
    if fmt == "json":
        payload = {
            "ok": not failed,
            "entries": len(project.record.entries),
            "errors": len(errors),
            "warnings": len(warnings),
            "problems": [p.as_dict() for p in project.problems],
            "orphans": orphans,
        }
        common.echo(json.dumps(payload, indent=2))
    else:
        for problem in project.problems:  # one stream, errors first: a cause before its consequences
            common.echo(str(problem), err=True)
        if orphans:
            common.echo(f"orphans (nothing links to or from them): {some(orphans, common.SHOWN_IDS)}")
        n = len(project.record.entries)
        common.echo(f"{n} entr{'y' if n == 1 else 'ies'}: {len(errors)} error{'s' if len(errors) != 1 else ''}, "
                    f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}")
    sys.exit(1 if failed else 0)


@cli.command(name="list", short_help="List entries, by kind or tag.")
@common.root_option
@click.option("--kind", "kind_name", default=None, help="Only entries of this kind (literature, note, theory or a prefix).")
@click.option("--tag", default=None, callback=lambda _c, _p, v: common.a_tag(v), help="Only entries with this tag.")
def list_(root: Path | None, kind_name: str | None, tag: str | None) -> None:
    """List the record's entries: id, kind, status and title, one a line."""
    from recordtool.record.load import title_line

    project = common.open_record(root)
    kind = None if kind_name is None else _kind(project, kind_name, "--kind")
    common.report_errors(project)
    for entry_id, entry in project.record.entries.items():
        if (kind is not None and entry.kind != kind.name) or (tag is not None and tag not in entry.tags):
            continue
        title = title_line(entry)
        if len(title) > 100:
            title = title[:99] + "…"
        common.echo(f"{entry_id:<12} {entry.kind:<10} {entry.status:<10} {title}")
    if tag is not None and (hint := common.no_such_tag([tag], project.record.entries.values(), "entry")):
        common.echo(hint, err=True)


@cli.command(short_help="Show an entry with its citations and backlinks.")
@common.root_option
@click.argument("entry_id", metavar="ID")
def show(root: Path | None, entry_id: str) -> None:
    """Show one entry with its citations both ways and its backlinks."""
    if not entry_id.strip():
        raise click.BadParameter(f"give an entry's id, e.g. {_example_id(root)}", param_hint="ID")
    project = common.open_record(root)
    entry = project.record.entries.get(entry_id.upper()) or project.record.entries.get(entry_id)
    if entry is None:
        from recordtool.record.problems import did_you_mean_id

        hint = did_you_mean_id(entry_id.upper(), project.record.entries)
        raise click.ClickException(terminal(f"no entry {entry_id} in the record{hint}"))
    from recordtool.record.schema import Theory
    from recordtool.render.terminal import format_entry

    verdict = ""
    if isinstance(entry, Theory):
        from recordtool.verify.status import assess, describe_state

        verdict = describe_state(assess(project)[entry.id])
    common.echo(format_entry(project.graph, entry.id, verdict))


def _kind(project: Project, name: str, hint: str) -> Kind:
    """The kind called ``name`` (or with that prefix); a usage error naming the known ones."""
    kind = project.config.kind_named(name)
    if kind is None:
        names = ", ".join(k.name for k in project.config.kinds.values())
        raise click.BadParameter(f"unknown kind '{name}'; known kinds: {names}", param_hint=hint)
    return kind


def _example_id(root: Path | None) -> str:
    """An id of the project's first kind, for a hint: the shape its ids take, whatever its
    record holds (``PREFIX-1`` where no configuration can be read)."""
    try:
        config = common.config_of(root)
    except (click.UsageError, OSError):
        return "PREFIX-1"
    return f"{next(iter(config.kinds), 'PREFIX')}-1"


@cli.command(short_help="Create an entry with the next free id.")
@common.root_option
@click.argument("kind_name", metavar="KIND")
@click.option("--title", default=None, help="The new entry's title (with --bibtex, the work's title by default).")
@click.option("--bibtex", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Literature: read the reference (authors, year, title, venue, URL, DOI) from this BibTeX file.")
@click.option("--key", default=None, metavar="K", help="The entry of the BibTeX file to read, when it holds several.")
@click.option("--doi", default=None, metavar="DOI", help="The entry of the BibTeX file with this DOI. Nothing is "
              "fetched: without --bibtex, export the work's BibTeX from your reference manager first.")
@click.option("--force", is_flag=True, help="Create a literature entry even when one with the same DOI, URL or "
              "title is in the record.")
def new(root: Path | None, kind_name: str, title: str | None, bibtex: Path | None, key: str | None,
        doi: str | None, force: bool) -> None:
    """Create an entry of KIND (literature, note, theory) with the next free id.

    Writes a valid file from a template and prints its path; never overwrites a file. A
    literature entry with the DOI, URL or title of one in the record is refused (exit 1)
    unless --force; exits 2 on a usage error or BibTeX that cannot be read (docs/record.md).
    """
    from recordtool.record.bibtex import BibtexError, read_reference
    from recordtool.record.duplicates import same_work
    from recordtool.record.template import TemplateError, create_entry

    project = common.open_record(root)
    kind = _kind(project, kind_name, "KIND")
    reference = None
    if bibtex is not None or key is not None or doi is not None:
        if kind.schema != "literature":
            raise click.BadParameter(f"only literature has a reference to read from BibTeX, not {kind.name}",
                                     param_hint="KIND")
        if bibtex is None and doi is None:
            raise click.UsageError("--key names an entry of a BibTeX file: give the file with --bibtex FILE")
        if bibtex is None:
            raise click.UsageError(terminal(f"looking up DOI {doi} needs the network, and recordtool fetches "
                                            "nothing: export the work's BibTeX from your reference manager and "
                                            "give it with --bibtex FILE"))
        try:
            reference = read_reference(bibtex, key, doi)
        except BibtexError as exc:
            raise click.UsageError(terminal(str(exc))) from None
    if title is None and reference is not None:
        title = reference.title
    if title is None:
        raise click.UsageError('give the entry a title: --title "..." (or, for literature, --bibtex FILE)')
    if kind.schema == "literature" and not force:
        found = (same_work(project.record, reference.title, reference.doi, reference.url) if reference is not None
                 else same_work(project.record, title))
        if found is not None:
            raise click.ClickException(terminal(
                f"{found[0]} ({project.record.places[found[0]].path}) has the same {found[1]}: the work is in the "
                f"record already; cite {found[0]}, or give --force to add another entry"))
    try:
        path = create_entry(project.config, kind, title, reference=reference)
    except TemplateError as exc:
        raise click.ClickException(terminal(str(exc))) from None
    except OSError as exc:
        common.storage_error(exc, "cannot write the entry")
    common.echo(project.config.relative(path))


@cli.command(short_help="Print the JSON Schema of an entry, for editors.")
@common.root_option
def schema(root: Path | None) -> None:
    """Print the JSON Schema (draft 7) of the record's entries, for an editor's YAML server.

    `recordtool new` keeps a copy in record/.schema.json, which each new entry's first line
    names; `recordtool schema > record/.schema.json` refreshes it (docs/editors.md).
    """
    from recordtool.record.template import schema_text

    common.echo(schema_text(common.config_of(root)).rstrip("\n"))


@cli.command()
@common.root_option
@click.option("-o", "--output", "output", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="The folder to write into (default: [tool.recordtool] pages, record/pages).")
@click.option("--check", is_flag=True, help="Then parse the pages and report every link or image that does "
              "not resolve (exit 1 if any).")
@common.jobs_option
@click.option("--site", is_flag=True, help="Also write mkdocs.yml beside the pages folder, so that "
              "`mkdocs build -f record/mkdocs.yml --strict` builds a static site with navigation, search "
              "and the graphs drawn (pip install \".[site]\").")
@common.no_cache_option
@click.option("--watch", is_flag=True, help="Then render again each time an entry, a verdict or a figure is "
              "saved (only the pages that change are written), until Ctrl-C.")
def render(root: Path | None, output: Path | None, check: bool, jobs: int | None, site: bool,
           no_cache: bool, watch: bool) -> None:
    """Write the record as backlinked Markdown pages, one per entry, with index pages.

    Only pages whose content changed are rewritten; pages of deleted entries are removed,
    while an entry whose file is there but does not load keeps its last page, marked stale
    on the index page. A file recordtool did not write is never written over (render names
    it and writes nothing). Exits 0 when done, 1 when --check finds a broken link (each
    printed as page:line) or an entry file does not load, 2 on a usage error (or such a
    file), 130 on Ctrl-C.
    """
    if watch:
        import recordtool.cli.watch as watching

        watching.render(click.get_current_context(), root, output)
    from recordtool.render.site import render as render_site
    from recordtool.render.write import RenderError

    try:
        # (a progress line on a terminal, erased before anything else is printed)
        with Meter(sys.stderr) as meter:
            project = common.open_record(root, jobs, cache=not no_cache, meter=meter)
            meter.erase()
            common.report_errors(project)
            report = render_site(project, output, check=check, jobs=jobs, fresh=no_cache, meter=meter)
            if site:
                from recordtool.render.mkdocs import write_mkdocs_config

                site_config = write_mkdocs_config(project.config, report.out)
    except RenderError as exc:
        raise click.UsageError(terminal(str(exc))) from None
    except KeyboardInterrupt:
        common.echo("interrupted: the pages written so far are whole, the others as they were; "
             "render again to finish", err=True)
        sys.exit(common.interrupted_code())
    except OSError as exc:
        common.storage_error(exc, "cannot write the pages")
    for figure in report.missing:
        common.echo(f"warning: figure {figure} is named by a verdict but missing; it is not shown", err=True)
    for figure in report.refused:
        common.echo(f"warning: figure {figure}; it is not copied", err=True)
    where = project.config.relative(report.out)
    for link in report.broken or []:
        common.echo(f"{where}/{link}", err=True)
    common.echo(report.summary(where))
    if site:
        common.echo(f"site: mkdocs build -f {project.config.relative(site_config)} --strict")
    if report.broken:
        common.echo(f"{len(report.broken)} broken link{'s' if len(report.broken) != 1 else ''}", err=True)
    if report.unloaded:  # (each file's error said above: ``common.report_errors``)
        count = len(report.unloaded)
        kept = (f"; {'its page is' if count == 1 else 'their pages are'} kept as the last render wrote "
                f"{'it' if count == 1 else 'them'}, marked stale on the index page" if report.stale else "")
        common.echo(f"error: {count} entry file{'s' if count != 1 else ''} {'does' if count == 1 else 'do'} not load "
             f"({some(sorted(report.unloaded), 5)}){kept}; fix {'it' if count == 1 else 'them'} and render again",
             err=True)
    if report.broken or report.unloaded:
        sys.exit(1)


cli.add_command(verdicts.verify)
cli.add_command(verdicts.status)
cli.add_command(verdicts.diff)


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="recordtool")


def run() -> None:
    """The command line as a program (``python -m recordtool``, the ``recordtool`` script)."""
    main()
