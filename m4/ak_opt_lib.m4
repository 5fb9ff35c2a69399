# SPDX-License-Identifier: MIT
#
# AK_OPT_LIB(NAME, PKG-CONFIG-MODULE, DEBIAN-PACKAGE, WHAT-FOR)
#
# An optional library found through pkg-config: --with-NAME=yes requires
# it, --without-NAME skips it, the default uses it when found.  Sets
# have_NAME (yes/no), NAME_CFLAGS/NAME_LIBS (PKG_CHECK_MODULES), the
# automake conditional HAVE_NAME and NAME_VERSION, and appends a line to
# ak_found or ak_missing, which configure prints in its summary: a
# missing library says what needs it and which Debian package has it.

AC_DEFUN([AK_OPT_LIB_INIT], [
ak_found=
ak_missing=
])

AC_DEFUN([AK_OPT_LIB], [
	AC_REQUIRE([AK_OPT_LIB_INIT])
	AC_ARG_WITH([$1],
		[AS_HELP_STRING([--with-$1], [use $1 ($4) @<:@default=check@:>@])],
		[], [with_$1=check])
	have_$1=no
	$1_version=
	AS_IF([test "x$with_$1" != xno], [
		PKG_CHECK_MODULES(m4_toupper([$1]), [$2],
			[have_$1=yes
			 $1_version=`$PKG_CONFIG --modversion "$2" 2>/dev/null`],
			[AS_IF([test "x$with_$1" = xyes],
				[AC_MSG_ERROR([--with-$1 given but $2 was not found: install the Debian package $3 (or run scripts/setup-deps)])])])
	])
	AS_IF([test "x$have_$1" = xyes],
		[ak_found="$ak_found
    $1 $[]$1_version ($4)"],
		[AS_IF([test "x$with_$1" = xno],
			[ak_missing="$ak_missing
    $1: disabled by --without-$1 ($4)"],
			[ak_missing="$ak_missing
    $1: not found; needed for $4; Debian package: $3"])])
	AM_CONDITIONAL(m4_toupper([HAVE_$1]), [test "x$have_$1" = xyes])
	AC_SUBST(m4_toupper([$1])[_VERSION], [$]$1_version)
])

