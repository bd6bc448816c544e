"""A preloaded library that nudges libm's ``sinf``/``cosf``/``sincosf`` one ulp up
when the process's environment says so, and can crash on demand: the same file
(so the same toolchain part) draws two ways, which makes a real ``regression``
and a real unstable frame (tests/test_second_opinion.py, benchmarks/second_opinion.py).

``NF_NUDGE_WHEN`` and ``NF_CRASH_WHEN`` are each ``always``, ``NAME`` (that variable
set and not empty) or ``NAME=VALUE`` (exactly), read once when the library loads;
unset: never. A crash is a SIGSEGV raised in the first ``sinf``/``cosf``/``sincosf``
call, as a fault inside the rasterizer would be.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int nudge, crash;

static int when(const char *rule) {
    if (!rule || !*rule) return 0;
    if (!strcmp(rule, "always")) return 1;
    const char *eq = strchr(rule, '=');
    if (!eq) { const char *v = getenv(rule); return v && *v; }
    char name[128];
    size_t n = (size_t)(eq - rule);
    if (n >= sizeof name) return 0;
    memcpy(name, rule, n); name[n] = 0;
    const char *v = getenv(name);
    return v && !strcmp(v, eq + 1);
}

__attribute__((constructor)) static void decide(void) {
    nudge = when(getenv("NF_NUDGE_WHEN"));
    crash = when(getenv("NF_CRASH_WHEN"));
}

static float up(float x) {
    if (crash) raise(SIGSEGV);
    return nudge ? nextafterf(x, INFINITY) : x;
}
float sinf(float x) {
    static float (*real)(float);
    if (!real) real = (float (*)(float))dlsym(RTLD_NEXT, "sinf");
    return up(real(x));
}
float cosf(float x) {
    static float (*real)(float);
    if (!real) real = (float (*)(float))dlsym(RTLD_NEXT, "cosf");
    return up(real(x));
}
void sincosf(float x, float *s, float *c) {
    static void (*real)(float, float *, float *);
    if (!real) real = (void (*)(float, float *, float *))dlsym(RTLD_NEXT, "sincosf");
    real(x, s, c);
    *s = up(*s);
    *c = up(*c);
}
"""


def compiler() -> str | None:
    return shutil.which("cc") or shutil.which("gcc")


def build(directory: Path) -> Path:
    """Compile the library into ``directory`` with the system C compiler."""
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc or gcc) on this machine")
    source = directory / "switched_nudge.c"
    source.write_text(SOURCE)
    library = directory / "libswitchednudge.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl",
                    "-lm"], check=True, timeout=120, capture_output=True)
    return library
