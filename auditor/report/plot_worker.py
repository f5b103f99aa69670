"""Draw the report's figures in a second process, so importing matplotlib (about half a
second) and drawing run on the other core while `audit report` loads the signer, audits the
run and imports WeasyPrint; the main process never imports matplotlib (about 40 MiB less).

`PlotWorker()` starts the child (`main`, with this process's import path) at once; the child imports
matplotlib and waits. `submit(specs)` hands it the figure specs (`plots.draw`'s argument)
and returns at once; `result()` waits for the SVG texts. The child runs the very code of
`plots.draw`, in a fresh interpreter, so the figures are the bytes an in-process draw gives.
Specs and figures travel pickled over the child's stdin and stdout: both ends are this
program, nothing from a run is unpickled that this process did not pickle itself.

Failure is an error, never a hang: a child that raises sends its traceback back, one that
dies or cannot start is reported with its exit status and the end of its stderr, and one
that gives no answer within `TIMEOUT_S` is killed; each raises `PlotWorkerError`."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

TIMEOUT_S = 600.0
"""The longest the report waits for its figures (a default run's take well under 2 s)."""


_CHILD = ("import sys; sys.path[:] = sys.argv[1:]; "
          "from auditor.report.plot_worker import main; main()")
"""The child's program: the parent's import path exactly (not the working directory's
modules: `-P`), then `main`."""


class PlotWorkerError(RuntimeError):
    """The plot worker failed: what it said, or how it ended."""


class PlotWorker:
    """One child process drawing one report's figures (module doc)."""

    def __init__(self) -> None:
        # a file, not a pipe: a child writing much to stderr never blocks on it
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._sender: threading.Thread | None = None
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD, *sys.path],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        except OSError as exc:
            self._stderr.close()
            raise PlotWorkerError(f"the plot worker ({sys.executable}) could not start: "
                                  f"{exc}") from None

    def submit(self, specs: dict[str, tuple[str, Any]]) -> None:
        """Hand SPECS to the child; a thread writes them, so a child still importing (the
        pipe full) does not hold this process up."""
        data = pickle.dumps(specs, protocol=pickle.HIGHEST_PROTOCOL)

        def send() -> None:
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write(data)
                self._proc.stdin.close()
            except OSError:
                pass  # the child is gone: result() says how it ended

        self._sender = threading.Thread(target=send, name="plot-worker-send", daemon=True)
        self._sender.start()

    def result(self, timeout: float = TIMEOUT_S) -> dict[str, str | None]:
        """The figures (name -> SVG text or None), or PlotWorkerError."""
        proc = self._proc
        assert proc is not None and self._sender is not None, "submit() first"
        deadline = time.monotonic() + timeout
        try:
            self._sender.join(timeout)
            if self._sender.is_alive():  # the child never read its specs
                raise subprocess.TimeoutExpired(proc.args, timeout)
            proc.stdin = None  # the sender closed it: communicate() only reads
            out, _ = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.close()
            raise PlotWorkerError(f"the plot worker drew nothing in {timeout:.0f} s; "
                                  "stopped it") from None
        try:
            status, payload = pickle.loads(out)
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            status, payload = "dead", None
        said, code = self._said(), proc.returncode
        self.close()
        if status == "ok" and code == 0:
            return payload
        if status == "error":
            raise PlotWorkerError(f"the plot worker failed drawing the figures:\n{payload}")
        raise PlotWorkerError(f"the plot worker ended (exit status {code}) without the "
                              f"figures{': ' + said if said else ''}")

    def _said(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace").strip()[-2000:]

    def close(self) -> None:
        """Stop the child if it still runs (a report that failed before its figures)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        self._stderr.close()

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> None:
    """The child: import matplotlib, read the specs, answer ("ok", figures) or ("error",
    traceback) on stdout."""
    answer_to = sys.stdout.buffer
    sys.stdout = sys.stderr  # a library's print must not mix with the answer
    from auditor.report import plots

    plots.load_matplotlib()
    specs = pickle.load(sys.stdin.buffer)
    try:
        answer: tuple[str, Any] = ("ok", plots.draw(specs))
    except Exception:
        answer = ("error", traceback.format_exc())
    pickle.dump(answer, answer_to, protocol=pickle.HIGHEST_PROTOCOL)
    answer_to.flush()


if __name__ == "__main__":
    main()
