"""The check on the linked binary: the CUDA runtime must be linked statically."""
import shutil

from .. import proc


def check_binary(binary):
    """Violations in the linked binary (the CUDA runtime must be linked statically)."""
    readelf = shutil.which("readelf")
    if not readelf:
        return []
    r = proc.run([readelf, "-d", binary], 60)
    for ln in r.stdout.splitlines():
        if "NEEDED" in ln and "libcudart" in ln:
            return ["the CUDA runtime is linked dynamically (the grader links it statically)"]
    return []
