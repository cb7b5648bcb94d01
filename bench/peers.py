"""Shared pieces of the peer benchmarks (bench/compare, bench/layers/run): running a step
with a clear error, installing the peers (PyTorch, oneDNN) through apt-get, building a C
harness against them, building tvmjit, and the thread-count flag.

Messages name the calling script (its path from the repository root), so that a failure
says which benchmark and which step failed.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def prog():
    return os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)


def die(msg):
    print(f"{prog()}: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, what, env=None, timeout=900):
    """Runs cmd from the repository root; returns stdout. A failure names the step and shows stderr."""
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        die(f"{what}: '{cmd[0]}' not found")
    except subprocess.TimeoutExpired:
        die(f"{what}: no result after {timeout} s: {' '.join(cmd)}")
    if p.returncode != 0:
        die(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
    return p.stdout


def parse_threads(text, error):
    """'1 2' or '1,2' -> ['1', '2']; calls error(message) (argparse's) on anything else."""
    try:
        threads = [str(int(x)) for x in text.replace(",", " ").split()]
    except ValueError:
        error(f'--threads takes counts separated by spaces, e.g. "1 2", not {text!r}')
    if not threads or any(int(t) < 1 for t in threads):
        error("--threads takes positive counts")
    return threads


def c_compiler(out):
    """The C compiler (CC, else cc or gcc), checked on an empty program built into out/."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        die("no C compiler (cc); run ./setup.sh first")
    probe = os.path.join(out, "cc_probe.c")
    with open(probe, "w") as f:
        f.write("int main(void) { return 0; }\n")
    run([cc, probe, "-o", os.path.join(out, "cc_probe")], f"the C compiler '{cc}' on an empty program")
    return cc


def have_torch():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def have_dnnl(cc, out):
    src = os.path.join(out, "dnnl_probe.c")
    with open(src, "w") as f:
        f.write("#include <dnnl.h>\nint main(void) { return dnnl_version()->major == 0; }\n")
    return subprocess.run([cc, src, "-ldnnl", "-o", os.path.join(out, "dnnl_probe")],
                          capture_output=True).returncode == 0


def install_peers(cc, out, allow):
    """PyTorch (python3-torch) and oneDNN (libdnnl-dev) through apt-get when missing."""
    missing = [pkg for pkg, ok in (("python3-torch", have_torch()), ("libdnnl-dev", have_dnnl(cc, out))) if not ok]
    if not missing:
        return
    if not allow:
        die(f"missing {' '.join(missing)} and --no-install given: apt-get install -y {' '.join(missing)}")
    print(f"{prog()}: installing {' '.join(missing)} (apt-get)", file=sys.stderr)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (sudo + ["apt-get", "update", "-qq"],
                sudo + ["apt-get", "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600"] + missing):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            die(f"could not install {' '.join(missing)}: '{' '.join(cmd)}' exited {p.returncode}\n"
                f"{p.stderr.strip()[-1500:]}\ninstall them by hand (apt-get install -y {' '.join(missing)}) and rerun")
    if not have_torch():
        die(f"PyTorch still cannot be imported by {sys.executable} after installing python3-torch")
    if not have_dnnl(cc, out):
        die("a program using <dnnl.h> and -ldnnl still does not build after installing libdnnl-dev")


def build_c(cc, src, exe, libs):
    """Builds src (a path from the repository root) into exe unless exe is newer."""
    src = os.path.join(ROOT, src)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        run([cc, "-O2", "-Wall", "-pthread", src, "-o", exe] + libs, f"building {os.path.relpath(src, ROOT)}")
    return exe


def tvmjit_binary(path):
    """--tvmjit PATH as given, else build/tvmjit brought up to date (./setup.sh on a fresh clone)."""
    if path:
        if not os.access(path, os.X_OK):
            die(f"--tvmjit {path}: not an executable")
        return path
    exe = os.path.join(ROOT, "build", "tvmjit")
    if os.path.exists(os.path.join(ROOT, "build", "CMakeCache.txt")):
        run(["cmake", "--build", "build", "-j2"], "building tvmjit (cmake --build build)", timeout=3600)
    else:
        run([os.path.join(ROOT, "setup.sh")], "building tvmjit (./setup.sh)", timeout=3600)
    if not os.access(exe, os.X_OK):
        die(f"{exe} was not built")
    return exe


def cpu_name():
    """The CPU's model name as lscpu gives it (else /proc/cpuinfo's)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except FileNotFoundError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "unknown CPU")
    except OSError:
        return "unknown CPU"
