# SPDX-License-Identifier: MIT
#
# AK_CROSS_PKG_CONFIG
#
# A plain `./configure --host=aarch64-linux-gnu` on Debian finds no
# aarch64-linux-gnu-pkg-config and falls back to the build machine's
# pkg-config, which answers with the build machine's libraries: configure
# then "finds" an x86-64 jansson and the link fails much later (cannot
# find -ljansson).  When cross-compiling with an unprefixed pkg-config and
# nothing set by the user (PKG_CONFIG_LIBDIR, PKG_CONFIG_PATH,
# PKG_CONFIG_SYSROOT_DIR), point it at the host's own .pc files: the
# multiarch directory (/usr/lib/<triplet>/pkgconfig, what
# `scripts/setup-deps --cross` installs into) or the cross sysroot
# (/usr/<triplet>/lib/pkgconfig, big-endian ppc64); where neither exists,
# stop and say what to set.  Call it after PKG_PROG_PKG_CONFIG.

AC_DEFUN([AK_CROSS_PKG_CONFIG], [
AS_IF([test "x$cross_compiling" = xyes && test -n "$PKG_CONFIG" &&
       test -z "$PKG_CONFIG_LIBDIR$PKG_CONFIG_PATH$PKG_CONFIG_SYSROOT_DIR"], [
	AS_CASE([`basename "$PKG_CONFIG"`],
	[*-pkg-config|*-pkgconf], [],
	[ak_triplet=`$CC -print-multiarch 2>/dev/null`
	 AS_IF([test -z "$ak_triplet"], [ak_triplet=$host_alias])
	 ak_pcdirs=
	 for ak_d in "/usr/lib/$ak_triplet/pkgconfig" \
		     "/usr/$ak_triplet/lib/pkgconfig"; do
		AS_IF([test -d "$ak_d"], [ak_pcdirs="$ak_pcdirs${ak_pcdirs:+:}$ak_d"])
	 done
	 AS_IF([test -z "$ak_pcdirs"],
		[AC_MSG_ERROR([cross-compiling for $host with the build machine's $PKG_CONFIG, and no .pc files for $ak_triplet in /usr/lib/$ak_triplet/pkgconfig or /usr/$ak_triplet/lib/pkgconfig: run scripts/setup-deps --cross, or set PKG_CONFIG_LIBDIR to the directory of $host's .pc files (or PKG_CONFIG to a $host-pkg-config)])])
	 AS_IF([test -d /usr/share/pkgconfig],
		[ak_pcdirs="$ak_pcdirs:/usr/share/pkgconfig"])
	 PKG_CONFIG_LIBDIR=$ak_pcdirs
	 export PKG_CONFIG_LIBDIR
	 AC_MSG_NOTICE([cross-compiling: $PKG_CONFIG reads $host's .pc files from PKG_CONFIG_LIBDIR=$ak_pcdirs])])
])
])
