"""OS-level names for the storage threads."""

from __future__ import annotations


def name_os_thread(name: str) -> None:
    """Name the calling thread for the OS (``top -H``, ``ps -L``, /proc/PID/task/*/comm);
    Python's thread names stay inside Python. Linux only, best effort."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass
