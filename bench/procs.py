"""Server processes: start, watch (/proc CPU and RSS), and always stop.

Every process the benchmark starts is registered here and stopped by its own id (and the
process group it leads, which the benchmark created for it) when its scenario ends, on error,
and at exit, Ctrl-C included.
"""

import asyncio
import contextlib
import os
import signal
import socket
import time
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

_live: dict[int, asyncio.subprocess.Process] = {}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads included, in seconds.

    Read from the process's CPU-time clock (nanosecond resolution: Linux lets any process read
    another's via the clock id ``clock_getcpuclockid`` would return); ``/proc/PID/stat``'s
    utime + stime, in 10 ms ticks, when that clock cannot be read.
    """
    try:
        return time.clock_gettime(_process_cpu_clock(pid))
    except OSError:
        return cpu_seconds_proc(pid)


def _process_cpu_clock(pid: int) -> int:
    # Linux's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED): the whole thread group's runtime.
    return ((~pid) << 3) | 2


def cpu_seconds_proc(pid: int) -> float:
    """utime + stime from /proc/PID/stat (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine has spent not idle (``/proc/stat``'s first line:
    everything but idle and iowait, steal included), summed over the cores; clock-tick resolution."""
    with open("/proc/stat") as f:
        fields = [int(value) for value in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    # guest and guest_nice (fields 8, 9) are already counted in user and nice.
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def rss_mib(pid: int) -> float:
    """Resident set size (VmRSS) in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start(
    argv: list[str], env: dict[str, str], log: Path, stdio: bool
) -> tuple[asyncio.subprocess.Process, float]:
    """Start a server; returns the process and the ``perf_counter`` just before the spawn."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as stderr:
        t0 = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if stdio else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if stdio else stderr,
            stderr=stderr,
            env=env,
            start_new_session=True,  # its own group: a terminal's Ctrl-C reaches only us
            limit=256 * 1024 * 1024,
        )
    register(process)
    return process, t0


def register(process: asyncio.subprocess.Process) -> None:
    """Track a process so ``kill_all`` can stop it if the run is interrupted."""
    _live[process.pid] = process


async def wait_for_port(process: asyncio.subprocess.Process, port: int, timeout: float) -> None:
    """Wait until ``port`` on 127.0.0.1 accepts connections (or the server dies)."""
    deadline = time.monotonic() + timeout
    while True:
        if process.returncode is not None:
            raise RuntimeError(f"server exited with code {process.returncode} before listening")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"server did not listen on port {port} within {timeout:.0f}s") from None
            await asyncio.sleep(0.02)
            continue
        writer.close()
        await writer.wait_closed()
        return


async def stop(process: asyncio.subprocess.Process, grace: float = 3.0) -> None:
    """Close stdin (a stdio server's cue to exit), then SIGTERM, then SIGKILL."""
    try:
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 0.5 if process.stdin is not None else 0.01)
            except TimeoutError:
                _signal(process.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), grace)
                except TimeoutError:
                    _signal(process.pid, signal.SIGKILL)
                    await process.wait()
    finally:
        _signal(process.pid, signal.SIGKILL, group_only=True)  # anything it left behind
        _live.pop(process.pid, None)


def _signal(pid: int, sig: signal.Signals, group_only: bool = False) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # the group this process leads (start_new_session)
    if not group_only:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def kill_all() -> None:
    """Last resort at exit: SIGKILL every server still registered."""
    for pid in list(_live):
        _signal(pid, signal.SIGKILL)
        _live.pop(pid, None)
