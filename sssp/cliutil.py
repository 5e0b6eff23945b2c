"""What the ``sssp`` and ``tune`` command lines share: the parser class, output files, escaping of
untrusted text, the signal policy and the one way a command ends (result, clean error line,
interrupt, or quiet broken pipe).

Exit statuses: 0 success; 1 an error (one line ``PROG: error: ...`` on stderr, ``--debug`` adds
the traceback); 2 bad usage (argparse); 128 + the signal's number when a signal stopped it
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), with one line; 141 the reader of stdout went away
(``tune report | head -1``), as the shell reports a command killed by SIGPIPE.

Signals (:func:`signal_policy`): SIGINT, SIGTERM and SIGHUP all become :class:`Interrupted` (a
``KeyboardInterrupt``) where they land, so every ``finally`` and ``except KeyboardInterrupt``
that cleans up after Ctrl-C (temporary files, runs stored as interrupted, worker processes)
does so for all three. The first signal is raised once; later ones are only noted, so that
cleaning up is not itself cut short. Code that must not be cut in the middle
(:func:`holding_signals`, or frames a ``defer`` predicate names) gets the signal when it is
done instead.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import io
import logging
import os
import signal
import stat
import sys
import threading
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from .errors import SSSPError, SSSPWarning

__all__ = [
    "EXIT_BROKEN_PIPE",
    "HANDLED_SIGNALS",
    "ArgumentParser",
    "Interrupted",
    "atomic_output",
    "check_signals",
    "check_writable_dir",
    "escape",
    "holding_signals",
    "is_stdout",
    "is_stream",
    "logging_to_stderr",
    "non_negative_int",
    "positive_int",
    "run_command",
    "signal_policy",
    "size_arg",
]

EXIT_BROKEN_PIPE = 141
HANDLED_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals every command handles alike (SIGHUP where the platform has it)."""


# -- signals ------------------------------------------------------------------------------------
class Interrupted(KeyboardInterrupt):
    """A handled signal (:data:`HANDLED_SIGNALS`), raised where it landed or at the next safe
    point. A ``KeyboardInterrupt``, so whatever cleans up after Ctrl-C cleans up after each."""

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        super().__init__(signal_name(self.signum))

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as the shell reports a command killed by it."""
        return 128 + self.signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class _SignalState:
    """What the handler has seen in this process (one policy per process)."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first signal: it decides the exit status
        self.raised = False
        self.holding = 0
        self.defer: Callable[[FrameType | None], bool] | None = None


_signals = _SignalState()


def _handler(signum: int, frame: FrameType | None) -> None:
    st = _signals
    if st.received is None:
        st.received = signum
    if st.raised or st.holding or (st.defer is not None and st.defer(frame)):
        return  # noted: check_signals() or the end of holding_signals() raises it
    st.raised = True
    raise Interrupted(st.received)


def _unraisable(info: Any) -> None:
    # Python cannot raise in a weakref callback or a __del__ (a garbage collection): it prints
    # "Exception ignored ... Traceback" and goes on. The noted signal stands in for it.
    if isinstance(info.exc_value, KeyboardInterrupt) and _signals.received is not None:
        return
    sys.__unraisablehook__(info)


@contextlib.contextmanager
def signal_policy(defer: Callable[[FrameType | None], bool] | None = None) -> Iterator[None]:
    """Route :data:`HANDLED_SIGNALS` to the one handler while the block runs (then restore).

    ``defer(frame)`` true: a signal landing in ``frame`` is noted, not raised (database code,
    whose connection would be left inside its transaction); :func:`check_signals` raises it.
    Outside the main thread (where Python runs no signal handler) nothing is installed.
    """
    global _signals
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = _signals
    _signals = _SignalState()
    _signals.defer = defer
    old = {s: signal.getsignal(s) for s in HANDLED_SIGNALS}
    old_hook = sys.unraisablehook
    for s in HANDLED_SIGNALS:
        signal.signal(s, _handler)
    sys.unraisablehook = _unraisable
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        sys.unraisablehook = old_hook
        _signals = saved


def received_signal() -> int | None:
    """The first handled signal this command received, or None."""
    return _signals.received


def check_signals() -> None:
    """Raise :class:`Interrupted` if a signal arrived (held back, deferred or swallowed): a
    command that received one was interrupted, whatever caught it meanwhile."""
    if _signals.received is not None:
        _signals.raised = True
        raise Interrupted(_signals.received)


@contextlib.contextmanager
def holding_signals() -> Iterator[None]:
    """Hold signals while the block runs (a pair of writes that must not be separated); one that
    arrived meanwhile is raised when the block ends normally."""
    _signals.holding += 1
    try:
        yield
    finally:
        _signals.holding -= 1
    if not _signals.holding and not _signals.raised:
        check_signals()


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose invalid-choice errors suggest the nearest valid choice
    (``tune reprot`` -> ``did you mean 'report'?``); subparsers inherit it."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # The one hook argparse offers for choice checks (Python 3.14 adds suggest_on_error here).
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            msg = f"invalid choice: {escape(str(value))!r} (choose from {', '.join(choices)})"
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
            if close:
                msg += f"; did you mean {close[0]!r}?"
            raise argparse.ArgumentError(action, msg)


# -- argument types (argparse ``type=``): a bad value is a usage error naming it ----------------
def size_arg(text: str) -> int:
    """A node count given as ``49k``, ``1M`` or an integer (:func:`sssp.classes.parse_size`)."""
    from .classes import parse_size

    try:
        return parse_size(text)
    except SSSPError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def non_negative_int(text: str) -> int:
    """An integer >= 0 (seeds, device ordinals)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid value {escape(text)!r}: expected an integer >= 0"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (counts)."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 1")
    return value


def device_list(text: str) -> list[int]:
    """Comma-separated device ordinals, e.g. ``0,1`` (each an integer >= 0; the library
    checks them against the devices visible)."""
    items = text.split(",")
    if not text.strip() or any(not item.strip() for item in items):
        raise argparse.ArgumentTypeError(
            f"invalid value {escape(text)!r}: expected device ordinals separated by commas, e.g. 0,1"
        )
    return [non_negative_int(item.strip()) for item in items]


def escape(text: object) -> str:
    """``text`` with control characters (terminal escape sequences, newlines, NUL...) shown as
    Python escapes, for strings that come from files: names and metadata of ``.npz`` graphs."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)


def check_writable_dir(path: str | Path) -> None:
    """Fail before long work when the output's folder does not exist."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise SSSPError(f"cannot write {escape(path)!r}: folder {escape(parent)!r} does not exist")


def _mode(path: str | Path) -> int | None:
    """``st_mode`` of what ``path`` points to; None when nothing is there."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None


def is_stream(path: str | Path) -> bool:
    """True when ``path`` is a FIFO or a character device (``/dev/stdout``): written directly,
    never replaced, whatever its name."""
    try:
        mode = _mode(path)
    except OSError:
        return False
    return mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode))


def is_stdout(path: str | Path) -> bool:
    """True when ``path`` is the file this process's stdout writes to: ``/dev/stdout`` or
    ``/dev/fd/1`` (a pipe, a terminal, or the file stdout was redirected to), or that file by
    its own name. Such output goes through stdout itself, at its position: reopening the path
    would truncate a file opened for appending (``>>``)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no such path; stdout without a descriptor
        return False


@contextlib.contextmanager
def atomic_output(path: str | Path, suffix: str) -> Iterator[Path]:
    """The path a writer should write ``path`` through.

    A new path or an existing regular file: a fresh temporary file beside it, renamed over it
    only if the block succeeds, so an error never leaves a half-written file nor replaces a good
    old one. A symbolic link: the same, for the file it points to (the link stays a link). A FIFO,
    a character device (``/dev/null``, a terminal) or stdout's file (``/dev/stdout``, piped or
    redirected; see :func:`is_stdout`): the path itself, written directly, since replacing it
    would destroy it or write where no reader looks. Anything else (a folder, a socket, a block
    device) is refused.

    ``suffix`` ends the temporary file's name, for writers that insist on one (``.npz``).
    A replaced file keeps its permission bits (a 0600 file stays private); one this process may
    not write (0444) is refused, as writing it in place would be. On SIGINT, SIGTERM or SIGHUP
    (:func:`signal_policy`) the temporary file is removed like on any other error.
    """
    given = Path(path)
    try:
        # The path itself first, links followed: realpath cannot resolve /dev/stdout when it is
        # a pipe (it gives /proc/PID/fd/pipe:[N], which does not exist).
        mode = _mode(given)
        target = Path(os.path.realpath(given))
        if mode is None:
            mode = _mode(target)
    except OSError as err:
        raise SSSPError(f"cannot write {escape(given)!r}: {err.strerror or err}") from err
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or is_stdout(given)):
        try:
            yield given
        except OSError as err:
            raise SSSPError(f"cannot write {escape(given)!r}: {err.strerror or err}") from err
        return
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise SSSPError(f"cannot write {escape(given)!r}: it is {kind}")
    if mode is not None and not os.access(target, os.W_OK):
        # Renaming over it would succeed (the folder is writable) and undo the protection.
        raise SSSPError(
            f"cannot write {escape(given)!r}: {os.strerror(errno.EACCES)} (the file is read-only)"
        )
    # Not mkstemp: the writer creates the file itself, so a new file gets the usual umask
    # permissions; a file that is replaced keeps its own.
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp{suffix}")
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, target)
    except OSError as err:
        raise SSSPError(f"cannot write {escape(given)!r}: {err.strerror or err}") from err
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def logging_to_stderr(prog: str, verbosity: int) -> Iterator[None]:
    """Route library logs to (the current) stderr for one command, then restore; WARNING and
    above by default, INFO with ``-v``, DEBUG with ``-vv``. The library's :mod:`warnings`
    (:class:`sssp.SSSPWarning`) are shown the same way, one line each: a command-line user has
    no use for the file and line Python's default display names."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: %(levelname)s: %(name)s: %(message)s"))
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler.setLevel(level)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(min(level, old_level) if old_level else level)

    def show(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        if issubclass(category, SSSPWarning):
            sys.stderr.write(f"{prog}: WARNING: {escape(message)}\n")
        else:
            default_show(message, category, *_, **__)

    try:
        with warnings.catch_warnings():  # restores showwarning and the filters afterwards
            default_show = warnings.showwarning
            warnings.showwarning = show
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def _quiet_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush fails silently."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def run_command(
    prog: str, func: Callable[[], int], *, debug: bool = False, interrupted: str = "interrupted"
) -> int:
    """Run one CLI command and map every way it can end to an exit status and at most one line
    on stderr (see the module docstring). ``interrupted`` is the message for a signal (its name
    is added after the first word group: ``interrupted by SIGTERM; ...``); run the command
    inside :func:`signal_policy` so that SIGTERM and SIGHUP end here too."""

    def fail(message: str) -> int:
        if debug:
            traceback.print_exc(file=sys.stderr)
        sys.stderr.write(f"{prog}: error: {escape(message)}\n")
        return 1

    for stream in (sys.stdout, sys.stderr):
        # Reports hold "×" and "—": a terminal that cannot show them gets escapes, not a crash.
        if isinstance(stream, io.TextIOWrapper):  # not a replaced stream without reconfigure
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")
    try:
        rc = func()
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler, not at exit
        check_signals()  # a signal held back, or swallowed on the way, still interrupted it
        return rc
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except SSSPError as err:
        return fail(str(err))
    except MemoryError:
        return fail("out of memory: the request is too large for this machine")
    except OSError as err:
        # Files and folders outside the command's inputs (HOME, caches) that cannot be used.
        where = f": {err.filename}" if err.filename else ""
        return fail(f"{err.strerror or err}{where}")
    except KeyboardInterrupt as err:
        # Python's own Ctrl-C (no policy installed) is SIGINT.
        signum = err.signum if isinstance(err, Interrupted) else signal.SIGINT
        head, sep, tail = interrupted.partition(";")
        sys.stderr.write(f"{prog}: {head} by {signal_name(signum)}{sep}{tail}\n")
        return 128 + signum


def run_script(prog: str, main: Callable[[], int | None]) -> NoReturn:
    """The end of a program under ``benchmarks/`` or ``scripts/``: ``main()`` run as a command
    (:func:`run_command` inside :func:`signal_policy`), then exit with its status, so that Ctrl-C
    anywhere in it ends with one line and 130, as the ``sssp`` and ``tune`` commands do."""
    with signal_policy():
        rc = run_command(prog, lambda: main() or 0)
    sys.exit(rc)
