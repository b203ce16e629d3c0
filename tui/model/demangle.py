"""C++ names as a person reads them: Itanium-mangled kernel names (`_ZN7ck_tile6kentry...`, as
HIP and some CUDA libraries record them) demangled by the toolchain's own demangler.

Binutils' `c++filt` (or LLVM's `llvm-cxxfilt`) first: it knows the newest manglings (C++23's
`DF16b` for `std::bfloat16_t`, in AMD's aiter and ck_tile kernels), which the libstdc++ of an
older distribution refuses. Where neither is installed, libstdc++'s own `__cxa_demangle` (loaded
wherever torch runs). A name no demangler accepts stays as recorded.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Iterable

from .patterns import MANGLED_NAME

FILTERS = ("c++filt", "llvm-cxxfilt")
FILTER_TIMEOUT_S = 10


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Each mangled name among `names` that a demangler accepts: its demangled form."""
    mangled = sorted({n for n in names if MANGLED_NAME.match(n) and "\n" not in n})
    if not mangled:
        return {}
    found = _through_filter(mangled)
    if found is None:
        found = _through_libstdcxx(mangled)
    return {raw: text for raw, text in zip(mangled, found, strict=True) if text and text != raw}


def _through_filter(names: list[str]) -> list[str] | None:
    """The names through c++filt, one a line; None where no filter runs."""
    for tool in FILTERS:
        path = shutil.which(tool)
        if path is None:
            continue
        try:
            done = subprocess.run(
                [path],
                input="\n".join(names) + "\n",
                capture_output=True,
                text=True,
                timeout=FILTER_TIMEOUT_S,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        lines = done.stdout.splitlines()
        if len(lines) == len(names):
            return lines
    return None


def _through_libstdcxx(names: list[str]) -> list[str]:
    try:
        lib = ctypes.CDLL("libstdc++.so.6")
        libc = ctypes.CDLL(None)
    except OSError:
        return list(names)
    cxa = lib.__cxa_demangle
    # The result is a malloc'd pointer: declared as one, or ctypes cuts it to an int.
    cxa.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    cxa.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    out = []
    for name in names:
        status = ctypes.c_int(0)
        pointer = cxa(name.encode(), None, None, ctypes.byref(status))
        if not pointer:
            out.append(name)
            continue
        try:
            out.append(ctypes.string_at(pointer).decode(errors="replace"))
        finally:
            libc.free(pointer)
    return out
