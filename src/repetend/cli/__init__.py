"""The ``repetend`` command: one entry point, subcommands thin over the library.

Each ``*_cmd`` module holds the subcommands of one part of the package and
exports them in ``COMMANDS``; their heavy imports live inside the functions so
that ``repetend --help`` stays fast.  Options shared by several commands, and
the mapping of options to configs, are in :mod:`repetend.cli.options`.
"""

from __future__ import annotations

import errno
import importlib
import re
import sys
import warnings

import click

from .._compile_notice import announce
from ..errors import RepetendError

__all__ = ["main"]

_MODULES = ("tokenize_cmd", "synth_cmd", "phrases_cmd", "dups_cmd", "report_cmd", "clean_cmd",
            "scan_cmd", "index_cmd", "warmup_cmd")


# file-system errors a user causes and can fix (a path under a regular file, a full
# disk, no permission): one line naming the path, not a traceback
_USER_ERRNOS = {errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.ENOSPC, errno.EDQUOT,
                errno.EACCES, errno.EPERM, errno.EROFS, errno.ENAMETOOLONG, errno.ENOENT,
                errno.EMFILE, errno.EFBIG}


def _os_message(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    path = exc.filename
    if exc.errno in (errno.ENOTDIR, errno.EEXIST) and path is not None:
        what += " (a part of the output path is a file, not a directory)"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what += " (free some space or choose another --out; the earlier outputs are kept)"
    return f"{path}: {what}" if path is not None else what


# numpy's tofile/save raise this, without an errno, when the file system takes
# fewer bytes than written: a full disk (or a quota, or the file size limit)
_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")


def _short_write(exc: OSError) -> str | None:
    m = _SHORT_WRITE.fullmatch(str(exc)) if exc.errno is None else None
    if m is None:
        return None
    return (f"No space left on device: a write of {int(m[1]):,} bytes stopped after "
            f"{int(m[2]):,} (free some space or choose another --out; the earlier outputs are kept)")


class _Group(click.Group):
    """Prints repetend's own errors as one clear line, without a traceback, and its
    warnings as one ``warning: …`` line each on stderr, once."""

    def invoke(self, ctx):
        with warnings.catch_warnings():
            warnings.simplefilter("once", UserWarning)   # repetend's warnings: one line, once
            shown = warnings.showwarning

            def show(message, category, filename, lineno, file=None, line=None):
                if category.__module__.split(".")[0] == "repetend":
                    click.echo(f"warning: {message}", err=True)
                else:  # pragma: no cover - other libraries' warnings as Python prints them
                    shown(message, category, filename, lineno, file, line)

            warnings.showwarning = show
            # click >= 8.2 keeps the subcommand's words in _protected_args
            protected = (ctx._protected_args if hasattr(ctx, "_protected_args")
                         else ctx.protected_args)
            args = [*protected, *ctx.args]
            if not {"-q", "--quiet"} & set(args):
                announce(lambda line: click.echo(line, err=True))
            return self._invoke(ctx)

    def _invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:   # a bad option value or a missing argument: one line
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            click.echo(f"error: {exc.format_message().rstrip('.')} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except RepetendError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except OSError as exc:
            short = _short_write(exc)
            if exc.errno not in _USER_ERRNOS and short is None:
                raise
            click.echo(f"error: {short or _os_message(exc)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:  # pragma: no cover - interactive
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="repetend")
def main() -> None:
    """Find the text that repeats across a corpus: boilerplate phrases and near-duplicates."""


for _name in _MODULES:
    try:
        _mod = importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as _exc:  # a part not written yet
        if _exc.name != f"{__name__}.{_name}":
            raise
        continue
    for _cmd in _mod.COMMANDS:
        main.add_command(_cmd)
