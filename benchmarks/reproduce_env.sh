#!/bin/sh
# Build the Python environment that `localization.py --reproduce` and
# `localization_offline.py --reproduce` run the reports' code with, and print its python.
#
#   benchmarks/reproduce_env.sh [DEST]      (default /tmp/nexusd-reproduce)
#   benchmarks/localization_offline.py --repos DIR \
#       --reproduce DEST/bin/python --ro-bind DEST
#
# What a developer of each repository would have installed: sympy's mpmath, pytest's
# runtime dependencies of 2019-2023 (pluggy < 1 and attrs 21 serve every base commit), and
# the held-out repositories' pure-Python ones (numpy, pandas, matplotlib, jinja2, ...). The
# repositories themselves are not installed: the sandbox runs each from its snapshot.
# Python 3.11 (PYTHON=...), with the `collections.Mapping`-style aliases that Python 3.10
# removed put back, because 2017-2019 sympy imports them. The venv links to that
# interpreter, and bwrap shows the sandbox only the system folders and DEST: an interpreter
# under a home folder (pyenv's, conda's) would be "not found" there, so it is refused.
set -eu
dest=${1:-/tmp/nexusd-reproduce}
python=${PYTHON:-python3.11}
real=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
case $real in
/usr/* | /bin/* | /lib/* | /lib64/* | /sbin/*) ;;
*)
    echo "reproduce_env.sh: $python is $real, which the sandbox cannot see;" \
        "give a system Python: PYTHON=/usr/bin/python3.11 $0 $dest" >&2
    exit 2
    ;;
esac
"$python" -m venv "$dest"
"$dest/bin/python" -m pip install -q --disable-pip-version-check \
    mpmath==1.4.1 \
    pluggy==0.13.1 py==1.11.0 attrs==21.4.0 six==1.17.0 more-itertools==11.2.1 \
    wcwidth==0.9.4 atomicwrites==1.4.1 iniconfig==2.3.1 toml==0.10.2 tomli==2.5.0 \
    exceptiongroup==1.3.2 importlib-metadata==10.2.0 packaging==26.4 \
    numpy==2.4.6 scipy==1.17.1 pandas==3.1.1 matplotlib==3.11.2 \
    Jinja2==3.1.6 Werkzeug==3.1.9 click==8.5.1 itsdangerous==2.2.0 \
    urllib3==2.8.0 chardet==7.7.0 idna==3.20 certifi PyYAML==6.0.4 \
    lazy-object-proxy==1.13.0 wrapt==2.5.2
site=$("$dest/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat > "$site/_compat_aliases.py" <<'PY'
import collections
import collections.abc

for _name in collections.abc.__all__:
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))
PY
echo "import _compat_aliases" > "$site/compat_aliases.pth"
echo "$dest/bin/python"
