#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python pipeline's tests (tests/python/test_*.py) under pytest, each
# test one TAP line (tests/python/conftest.py), so that automake's test
# driver keeps their totals in test-suite.log.  Run in the build folder:
# the tests find ./report/atomkit-report there.
srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
py=${AK_PYTHON:-/usr/bin/python3}
# the pipeline is host Python, the same whatever the target: the cross rig
# (AK_TEST_RUNNER set) leaves it to the native make check
if [ -n "${AK_TEST_RUNNER:-}" ]; then
	echo "1..0 # SKIP host Python: tested by the native make check"
	exit 0
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
	echo "1..0 # SKIP $py has no pytest (Debian package: python3-pytest)"
	exit 0
fi
# TAP on fd 3; pytest's own report (failures in full) on stderr, in the log
exec 3>&1
PYTHONDONTWRITEBYTECODE=1 AK_TAP_FD=3 AK_SRCDIR=$srcdir exec "$py" -m pytest -q -p no:cacheprovider \
	--rootdir "$srcdir/tests/python" "$srcdir/tests/python" 1>&2
