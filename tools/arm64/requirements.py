"""The requirements of a wheel as Linux aarch64 would resolve them.

`pip download --platform ...` evaluates environment markers against the host
(x86-64), so a dependency marked for every platform but Linux aarch64 (the
OpenType Sanitizer, which has no aarch64 wheel) would still be asked for. This
prints the wheel's Requires-Dist lines whose markers hold on the target, one a
line, for the setup to download and install."""

from __future__ import annotations

import sys
import zipfile
from email.parser import Parser

from packaging.markers import default_environment
from packaging.requirements import Requirement

TARGET = dict(default_environment(), sys_platform="linux", platform_system="Linux",
              platform_machine="aarch64", os_name="posix", extra="")


def main(wheel: str, python: str) -> int:
    TARGET.update(python_version=python, python_full_version=f"{python}.0")
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(name).decode("utf-8"))
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(TARGET):
            req.marker = None
            print(req)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
