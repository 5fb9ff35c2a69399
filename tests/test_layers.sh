#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers stand in order (doc/architecture.md, "Layers"): pages/ at the
# bottom, src/'s per-CPU layer and slab/ on it, malloc/ on top.
#
# - libatomkit-malloc.so's copy of pages/, src/ and slab/ refers to no
#   function of the malloc family: their metadata comes from the page
#   layer's hook, never from the malloc the library itself is (which
#   would re-enter the slab layer from below), and nothing is wrapped
#   (--wrap leaves __wrap_ and __real_ symbols).  Read with nm from the
#   library's objects (AK_MALLOC_OBJECTS, from the Makefile).
# - malloc/ includes no private header of slab/ or src/, and pages/ none
#   of the layers above it.
# TAP on stdout.
set -u

srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/tests/tap.sh"
nm=${AK_NM:-nm}
family='malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|strdup|strndup'

# The objects' own sources' includes: what no layer may include.
bad=$(grep -n '^#[ \t]*include[ \t]*"\.\./\(slab\|src\)/' \
	"$srcdir"/malloc/*.c "$srcdir"/malloc/*.h 2>/dev/null)
if [ -z "$bad" ]; then
	ok "malloc/ includes no private header of slab/ or src/"
else
	not_ok "malloc/ includes private headers: $bad"
fi
bad=$(grep -n '^#[ \t]*include[ \t]*\("\.\./\(slab\|src\|malloc\)/\|<atomkit/\(slab\|percpu\|malloc\)\.h>\)' \
	"$srcdir"/pages/*.c "$srcdir"/pages/*.h 2>/dev/null)
if [ -z "$bad" ]; then
	ok "pages/ includes nothing of the layers above it"
else
	not_ok "pages/ includes a layer above it: $bad"
fi

if [ -z "${AK_MALLOC_OBJECTS:-}" ]; then
	skip "libatomkit-malloc.so's objects" "AK_MALLOC_OBJECTS not set (run through make check)"
	finish
fi
if ! $nm --version >/dev/null 2>&1; then
	skip "libatomkit-malloc.so's objects" "no nm ($nm)"
	finish
fi

# Each libtool object names its PIC object, which went into the library.
checked=0 calls= wraps=
for lo in $AK_MALLOC_OBJECTS; do
	pic=$(sed -n "s/^pic_object='\(.*\)'$/\1/p" "$lo" 2>/dev/null)
	[ -n "$pic" ] || continue
	o=$(dirname "$lo")/$pic
	if [ ! -f "$o" ]; then
		not_ok "$lo: its object $o is missing"
		continue
	fi
	syms=$($nm "$o" 2>/dev/null) || {
		not_ok "nm $o failed"
		continue
	}
	checked=$((checked + 1))
	w=$(echo "$syms" | grep -E ' (__wrap_|__real_)' | awk '{ print $NF }')
	[ -z "$w" ] || wraps="$wraps $o:$(echo $w)"
	# malloc/'s own object defines the family, and may call it
	case $lo in malloc/*) continue ;; esac
	u=$(echo "$syms" | awk '$(NF - 1) == "U" { print $NF }' |
		grep -E "^\.?($family)(@.*)?$")
	[ -z "$u" ] || calls="$calls $o:$(echo $u)"
done
if [ "$checked" -eq 0 ]; then
	not_ok "no object of libatomkit-malloc.so found from AK_MALLOC_OBJECTS"
	finish
fi
if [ -z "$calls" ]; then
	ok "libatomkit-malloc.so's copy of pages/, src/ and slab/ ($checked objects with malloc/'s) calls no malloc-family function"
else
	not_ok "objects of libatomkit-malloc.so's copy call the malloc family:$calls"
fi
if [ -z "$wraps" ]; then
	ok "nothing of libatomkit-malloc.so is linked with --wrap"
else
	not_ok "wrapped symbols:$wraps"
fi
finish
