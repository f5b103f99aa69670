"""A second process for `audit report`: it draws the figures and signs the PDF, so importing
matplotlib and pyHanko (about half a second each) and drawing run on the other core while
this process audits the run, imports WeasyPrint and lays out the page; this process never
imports either (about 40 MiB less).

`ReportWorker(signs=...)` starts the child (`main`, with this process's import path) at
once; the child imports matplotlib and waits. `submit(specs)` hands it the figure specs
(`plots.draw`'s argument) and returns at once; `figures()` waits for the SVG texts, after
which the child imports pyHanko if the report is signed. `sign(pdf, files)` has it sign the
PDF (`auditor.report.sign`: the same calls as in this process). The child runs the very
code of `plots.draw` and `sign_pdf`, in a fresh interpreter, so the figures are the bytes an
in-process draw gives. Messages travel pickled over the child's stdin and stdout: both ends
are this program, and nothing is unpickled that this program did not pickle.

Failure is an error, never a hang: a refusal of the signing (a key pyHanko cannot load, a
timestamp authority that does not answer) is the `AuditorError` it is in-process; a child
that raises sends its traceback, one that dies or cannot start is reported with its exit
status and the end of its stderr, and one that gives no answer within `TIMEOUT_S` is
killed; each of these raises `WorkerError`."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import tempfile
import threading
import traceback
from typing import IO, Any

from auditor.errors import AuditorError
from auditor.quiet import quiet_libraries

TIMEOUT_S = 600.0
"""The longest the report waits for one answer (a default run's take well under 2 s)."""

_CHILD = "import sys; sys.path[:] = sys.argv[1:]; from auditor.report.worker import main; main()"
"""The child's program: the parent's import path exactly (not the working directory's
modules: `-P`), then `main`."""


class WorkerError(RuntimeError):
    """The report worker failed: what it said, or how it ended."""


def _in_thread(work: Any, timeout: float) -> Any:
    """WORK() run in a thread, its result, or TimeoutError after TIMEOUT seconds (the
    thread is left to end when the child is killed)."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # handed to the caller
            errors.append(exc)

    thread = threading.Thread(target=run, name="report-worker-io", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError
    if errors:
        raise errors[0]
    return box[0]


class ReportWorker:
    """One child process serving one report (module doc)."""

    def __init__(self, *, signs: bool = False) -> None:
        self.signs = signs
        # a file, not a pipe: a child writing much to stderr never blocks on it
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._sending: threading.Thread | None = None
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD, *sys.path],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            self._stderr.close()
            raise WorkerError(
                f"the report worker ({sys.executable}) could not start: {exc}"
            ) from None

    def _send(self, message: tuple[Any, ...]) -> None:
        """Write MESSAGE in a thread, so a child still importing (the pipe full) does not
        hold this process up; its answer is read by `_answer`."""
        assert self._proc is not None and self._proc.stdin is not None, "worker closed"
        data, pipe = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL), self._proc.stdin

        def send() -> None:
            try:
                pipe.write(data)
                pipe.flush()
            except OSError:
                pass  # the child is gone: _answer says how it ended

        self._sending = threading.Thread(target=send, name="report-worker-send", daemon=True)
        self._sending.start()

    def _answer(self, what: str, timeout: float) -> Any:
        proc = self._proc
        assert proc is not None and proc.stdout is not None and self._sending is not None
        out: IO[bytes] = proc.stdout
        try:
            status, payload = _in_thread(lambda: pickle.load(out), timeout)
        except TimeoutError:
            self.close()
            raise WorkerError(
                f"the report worker gave no {what} in {timeout:.0f} s; stopped it"
            ) from None
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            status, payload = "dead", None
        if status == "ok":
            return payload
        if status == "refused":
            self.close()
            raise AuditorError(payload)
        said = self._said()
        self.close()
        if status == "error":
            raise WorkerError(f"the report worker failed on the {what}:\n{payload}")
        raise WorkerError(
            f"the report worker ended (exit status {proc.returncode}) "
            f"without the {what}{': ' + said if said else ''}"
        )

    def submit(self, specs: dict[str, tuple[str, Any]]) -> None:
        """Hand the figure SPECS to the child; returns at once."""
        self._send(("figures", specs, self.signs))

    def figures(self, timeout: float = TIMEOUT_S) -> dict[str, str | None]:
        """The figures of `submit` (name -> SVG text or None), or WorkerError."""
        return self._answer("figures", timeout)

    def sign(self, pdf: bytes, files: Any, timeout: float = TIMEOUT_S) -> bytes:
        """PDF signed with FILES (`auditor.report.sign.SigningFiles`), or AuditorError as
        `sign_pdf` refuses, or WorkerError."""
        self._send(("sign", pdf, files))
        return self._answer("signature", timeout)

    def _said(self) -> str:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)  # its exit status, once it has ended
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace").strip()[-2000:]

    def close(self) -> None:
        """Stop the child (its work is done, or the report failed)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        if not self._stderr.closed:
            self._stderr.close()

    def __enter__(self) -> ReportWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(message: tuple[Any, ...]) -> Any:
    from auditor.report import plots

    if message[0] == "figures":
        return plots.draw(message[1])
    from auditor.report.sign import load_checked, sign_pdf

    _, pdf, files = message  # checked by the parent before any work (check_signer)
    return sign_pdf(pdf, load_checked(files))


def main() -> None:
    """The child: import matplotlib, then answer each message ("ok", result), ("refused",
    the AuditorError's message) or ("error", traceback) on stdout, until stdin ends."""
    quiet_libraries()  # before matplotlib and pyHanko: their warnings are not the user's
    answer_to, read_from = sys.stdout.buffer, sys.stdin.buffer
    sys.stdout = sys.stderr  # a library's print must not mix with the answers
    from auditor.report import plots

    plots.load_matplotlib()
    while True:
        try:
            message = pickle.load(read_from)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", _serve(message))
        except AuditorError as exc:
            answer = ("refused", str(exc))
        except Exception:
            answer = ("error", traceback.format_exc())
        pickle.dump(answer, answer_to, protocol=pickle.HIGHEST_PROTOCOL)
        answer_to.flush()
        if message[0] == "figures" and message[2]:
            import pyhanko.sign  # noqa: F401  (ahead of the signing, while the PDF is laid out)


if __name__ == "__main__":
    main()
